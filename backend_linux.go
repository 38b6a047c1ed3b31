package main

import (
	"os"

	"github.com/vetto-dev/vetto-runtime/hooks"
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

// shimIfRequested: on Linux the pre-exec step runs inside libcontainer's
// init (linux.Init), so nothing else is re-executed.
func shimIfRequested() (int, bool) { return 0, false }

func newBackend() runtime.Backend {
	return &linux.Backend{Version: version, Commit: gitCommit}
}

func hostFacts() hooks.Facts { return hooks.ProcFacts{} }
