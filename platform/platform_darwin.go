package platform

import (
	"github.com/sirupsen/logrus"

	"github.com/vetto-dev/vetto-runtime/darwin"
	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// InitIfRequested: only libcontainer re-executes the runtime as a
// container's init, so there is nothing to do here.
func InitIfRequested() {}

// shimIfRequested runs the darwin backend's own re-executions of the
// runtime inside a sandbox: the holder, which blocks until start and then
// replaces itself with the container's process (it returns only when it
// could not), and doctor's self-test.
func shimIfRequested(args []string) (int, bool) {
	if len(args) > 1 {
		switch args[1] {
		case darwin.HoldArg:
			return darwin.Hold(args), true
		case darwin.SelfTestArg:
			return darwin.SelfTest(args), true
		}
	}
	return 0, false
}

// NewBackend is Seatbelt. Its degradations and verdicts reach the
// core's one evaluator (runtime.PlatformBackend, runtime.VerifyingContainer).
func NewBackend(version, commit string) runtime.Backend { return darwin.New(version, logrus.Warnf) }

// HostFacts is nil: hooks.Facts reads Linux's procfs and cgroups. The
// darwin backend reads its own facts (sandbox_check, the process table) and
// reports them as verdicts, which the core records and judges.
func HostFacts() hooks.Facts { return nil }

// MonitorSupported: this platform's runtime starts a per-container
// monitor (it needs the host facts of Linux's procfs).
const MonitorSupported = false

func MonitorFaultOff() bool { return false }

// warmBackendCodecs is the backend's part of WarmCodecs.
func warmBackendCodecs() { /* this backend encodes nothing of its own on a command's path */ }
