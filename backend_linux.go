package main

import (
	"os"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/landlock"
	"github.com/vetto-dev/vetto-runtime/linux"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// initIfRequested turns this process into a container's init when
// libcontainer re-executes us as "vetto-runtime init", or into the
// Landlock exec shim when the init execs us inside the container; neither
// returns.
func initIfRequested() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case linux.InitArg:
		linux.Init()
	case landlock.ShimCommand:
		// The shim returns only when it could not exec the process.
		os.Exit(linux.Shim(os.Args))
	}
}

func newBackend() runtime.Backend {
	return &linux.Backend{Version: version, Commit: gitCommit}
}

func hostFacts() hooks.Facts { return hooks.ProcFacts{} }
