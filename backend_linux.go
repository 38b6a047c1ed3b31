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

// shimIfRequested runs what the runtime re-executes itself as, other than
// a container's init (whose pre-exec step runs inside linux.Init): the
// egress relay ("vetto-runtime relay") and doctor's user-namespace probe.
// It returns (with the exit status, true) only for those.
func shimIfRequested() (int, bool) {
	if len(os.Args) > 1 && os.Args[1] == linux.RelayArg {
		return linux.RelayMain(os.Args), true
	}
	if len(os.Args) == 3 && os.Args[1] == linux.UsernsProbeArg {
		// doctor's rootless probe, in the namespaces it made.
		if os.Args[2] == "lo" {
			return linux.UsernsProbeMain(), true
		}
		return 0, true
	}
	return 0, false
}

func newBackend() runtime.Backend {
	return &linux.Backend{Version: version, Commit: gitCommit}
}

func hostFacts() hooks.Facts { return hooks.ProcFacts{} }

// monitorSupported: this platform's runtime starts a per-container
// monitor (it needs the host facts of Linux's procfs).
const monitorSupported = true

// monitorFaultOff: the fault-injection build (tests only) starts no
// monitor when TESTONLY_VETTO_FAULT=no-monitor, so a test of verify is
// not raced by the monitor catching the same drift first.
func monitorFaultOff() bool {
	return linux.FaultInjection && os.Getenv("TESTONLY_VETTO_FAULT") == "no-monitor"
}
