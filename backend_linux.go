package main

import (
	"os"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/landlock"
	"github.com/vetto-dev/vetto-runtime/linux"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// initIfRequested turns this process into a container's init when
// libcontainer re-executes us as "vetto-runtime init"; it does not return.
func initIfRequested() {
	if len(os.Args) > 1 && os.Args[1] == linux.InitArg {
		linux.Init()
	}
}

// shimIfRequested runs the Landlock exec shim when a container's init
// execs us inside the container as "vetto-runtime landlock-exec"; it
// replaces this process with the container's own, and returns (with the
// exit status, true) only when it could not.
func shimIfRequested() (int, bool) {
	if len(os.Args) > 1 && os.Args[1] == landlock.ShimCommand {
		return linux.Shim(os.Args), true
	}
	if len(os.Args) > 1 && os.Args[1] == linux.RelayArg {
		return linux.RelayMain(os.Args), true
	}
	return 0, false
}

func newBackend() runtime.Backend {
	return &linux.Backend{Version: version, Commit: gitCommit}
}

func hostFacts() hooks.Facts { return hooks.ProcFacts{} }
