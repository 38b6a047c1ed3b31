package main

import (
	"os"

	"github.com/sirupsen/logrus"

	"github.com/vetto-dev/vetto-runtime/darwin"
	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

func initIfRequested() {}

// shimIfRequested runs the darwin backend's own re-executions of the
// runtime inside a sandbox: the holder, which blocks until start and then
// replaces itself with the container's process (it returns only when it
// could not), and doctor's self-test.
func shimIfRequested() (int, bool) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case darwin.HoldArg:
			return darwin.Hold(os.Args), true
		case darwin.SelfTestArg:
			return darwin.SelfTest(os.Args), true
		}
	}
	return 0, false
}

// newBackend is Seatbelt. It reports the degradations it accepted with a
// warning, until the core's launch line carries a backend's own.
func newBackend() runtime.Backend { return darwin.New(version, logrus.Warnf) }

// hostFacts is nil: hooks.Facts reads Linux's procfs and cgroups. The
// darwin backend reads its own facts (sandbox_check, the process table)
// and judges them in Create and Start.
func hostFacts() hooks.Facts { return nil }

// monitorSupported: this platform's runtime starts a per-container
// monitor (it needs the host facts of Linux's procfs).
const monitorSupported = false

func monitorFaultOff() bool { return false }
