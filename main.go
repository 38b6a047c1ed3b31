// vetto-runtime is a fail-closed, OCI-compatible container runtime and a
// drop-in for runc. main builds the command line (cli/) and exits with
// its status; it is the only place that calls os.Exit. The layout of the
// tree is README.md's "Layout", its design docs/architecture.md.
package main

import (
	"os"

	"github.com/vetto-dev/vetto-runtime/cli"
	"github.com/vetto-dev/vetto-runtime/platform"
)

// Set with -ldflags "-X main.version=… -X main.gitCommit=…".
var (
	version   = "0.1.0-dev"
	gitCommit = ""
)

// init turns this process into a container's init when libcontainer
// re-executes it as "vetto-runtime init". It must run here, in package
// init, as runc's does: the Go runtime runs package init on the main
// thread, locked to it, and libcontainer.Init locks the goroutine to
// whatever thread it is on. From main() the goroutine may already have
// moved to another thread; then the init drops its capabilities and sets
// no_new_privs on that thread only (both are per thread), and the host,
// reading /proc/<pid>/status — the main thread's — sees the init still
// privileged until the exec.
func init() {
	platform.InitIfRequested()
}

func main() {
	// The backends' own re-executions of the runtime and the canary
	// probe run before the command line: inside a sandbox there are no
	// flags, state root or logging to set up.
	if code, ok := platform.ReExec(os.Args); ok {
		os.Exit(code)
	}
	// One P when the host has no idle CPU (a second would only spin), then
	// the codec warm-up: a container command's first parse of a spec or
	// record is mostly encoding/json building its caches; begun now, on an
	// idle CPU, that overlaps the command line's set-up.
	platform.FitProcsToLoad()
	platform.WarmCodecs(os.Args)
	os.Exit(cli.Run(cli.NewApp(version, gitCommit), os.Args))
}
