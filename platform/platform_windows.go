package platform

import (
	"github.com/sirupsen/logrus"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/windows"
)

// InitIfRequested: only libcontainer re-executes the runtime as a
// container's init, so there is nothing to do here.
func InitIfRequested() {}

// shimIfRequested runs the windows backend's holder, which create starts
// as "vetto-runtime windows-holder": it owns a container's job until
// teardown and returns its exit status then.
func shimIfRequested(args []string) (int, bool) {
	if len(args) > 1 && args[1] == windows.HolderArg {
		return windows.Holder(args), true
	}
	return 0, false
}

// NewBackend is the Job Object backend. Its degradations and verdicts reach the
// core's one evaluator (runtime.PlatformBackend, runtime.VerifyingContainer).
func NewBackend(version, commit string) runtime.Backend { return windows.New(version, logrus.Warnf) }

// HostFacts is nil: hooks.Facts reads Linux's procfs and cgroups. The
// windows backend's holder reads the job's and the token's facts and
// reports them as verdicts, which the core records and judges.
func HostFacts() hooks.Facts { return nil }

// MonitorSupported: this platform's runtime starts a per-container
// monitor (it needs the host facts of Linux's procfs).
const MonitorSupported = false

func MonitorFaultOff() bool { return false }

// warmBackendCodecs is the backend's part of WarmCodecs.
func warmBackendCodecs() { /* this backend encodes nothing of its own on a command's path */ }
