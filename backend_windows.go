package main

import (
	"os"

	"github.com/sirupsen/logrus"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/windows"
)

func initIfRequested() {}

// shimIfRequested runs the windows backend's holder, which create starts
// as "vetto-runtime windows-holder": it owns a container's job until
// teardown and returns its exit status then.
func shimIfRequested() (int, bool) {
	if len(os.Args) > 1 && os.Args[1] == windows.HolderArg {
		return windows.Holder(os.Args), true
	}
	return 0, false
}

// newBackend is the Job Object backend. It reports the degradations it
// accepted with a warning, until the core's launch line carries a
// backend's own.
func newBackend() runtime.Backend { return windows.New(version, logrus.Warnf) }

// hostFacts is nil: hooks.Facts reads Linux's procfs and cgroups. The
// windows backend's holder reads the job's and the token's facts, and the
// backend judges them in Create and Start.
func hostFacts() hooks.Facts { return nil }

// monitorSupported: this platform's runtime starts a per-container
// monitor (it needs the host facts of Linux's procfs).
const monitorSupported = false

func monitorFaultOff() bool { return false }
