package platform

import (
	"fmt"
	"os"

	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// probeIfRequested runs the canary probe when a backend without an exec
// shim (darwin, windows) started the runtime inside a container's sandbox
// as "<self> probe" (canary.ProbeArg), and returns the exit code, with ok
// set; main exits with it. The plan arrives on stdin, never in argv, which
// the workload beside it can read. It runs before the CLI: inside the
// sandbox there are no flags, state root or logging to set up.
func probeIfRequested(args []string) (code int, ok bool) {
	if len(args) < 2 || args[1] != canary.ProbeArg {
		return 0, false
	}
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "vetto-runtime probe: takes no arguments; the plan is read from stdin")
		return runtime.ExitFailure, true
	}
	if err := canary.Probe(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "vetto-runtime probe:", err)
		return runtime.ExitFailure, true
	}
	return runtime.ExitOK, true
}
