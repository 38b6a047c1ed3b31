package platform

import (
	"os"
	"strings"
	"time"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/linux"
	"github.com/vetto-dev/vetto-runtime/linux/containerinit"
	"github.com/vetto-dev/vetto-runtime/linux/relaywire"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// InitIfRequested turns this process into a container's init when
// libcontainer executes this binary as "vetto-runtime init" (a build with
// no init executable embedded, linux/initexe_linux.go); it does not return.
func InitIfRequested() { containerinit.IfRequested(os.Args) }

// shimIfRequested runs what the runtime re-executes itself as, other than
// a container's init (whose pre-exec step runs inside linux.Init): the
// egress relay ("vetto-runtime relay", in a build that embeds no relay
// executable: relay_self_linux.go) and doctor's user-namespace probe. It
// returns (with the exit status, true) only for those.
func shimIfRequested(args []string) (int, bool) {
	if len(args) > 1 && args[1] == relaywire.Arg {
		return relayMain(args), true
	}
	if len(args) == 3 && args[1] == linux.UsernsProbeArg {
		// doctor's rootless probe, in the namespaces it made.
		if args[2] == "lo" {
			return linux.UsernsProbeMain(), true
		}
		return 0, true
	}
	return 0, false
}

// NewBackend is libcontainer's; version and commit go into the state it
// writes and its features document.
func NewBackend(version, commit string) runtime.Backend {
	return &linux.Backend{Version: version, Commit: commit}
}

// HostFacts are procfs's and cgroupfs's.
func HostFacts() hooks.Facts {
	if linux.FaultInjection {
		fault := os.Getenv("TESTONLY_VETTO_FAULT")
		if v, ok := strings.CutPrefix(fault, "slow-facts:"); ok {
			if d, err := time.ParseDuration(v); err == nil {
				return slowFacts{d: d}
			}
		}
		if v, ok := strings.CutPrefix(fault, "slow-cgroup-facts:"); ok {
			if d, err := time.ParseDuration(v); err == nil {
				return slowCgroupFacts{d: d}
			}
		}
	}
	return hooks.ProcFacts{}
}

// slowFacts is the fault-injection build's TESTONLY_VETTO_FAULT=slow-facts:<dur>:
// every scan of the host's processes by pid namespace takes <dur> longer,
// as a host with many processes or a slow emulated guest makes a
// verification round long (a test that no command waits for a monitor
// round's reading).
type slowFacts struct {
	hooks.ProcFacts
	d time.Duration
}

func (f slowFacts) PidsInNamespace(ns hooks.NamespaceID) ([]int, error) {
	time.Sleep(f.d)
	return f.ProcFacts.PidsInNamespace(ns)
}

// slowCgroupFacts is TESTONLY_VETTO_FAULT=slow-cgroup-facts:<dur>: every
// read of a cgroup's membership takes <dur> longer. Pre-launch
// verification reads it after the backend built the container and before
// create records it Launchable, so a test can kill create there (the
// crash a Compiled record must survive).
type slowCgroupFacts struct {
	hooks.ProcFacts
	d time.Duration
}

func (f slowCgroupFacts) InCgroup(dir string, pid int) (bool, error) {
	time.Sleep(f.d)
	return f.ProcFacts.InCgroup(dir, pid)
}

// MonitorSupported: this platform's runtime starts a per-container
// monitor (it needs the host facts of Linux's procfs).
const MonitorSupported = true

// MonitorFaultOff: the fault-injection build (tests only) starts no
// monitor when TESTONLY_VETTO_FAULT=no-monitor, so a test of verify is
// not raced by the monitor catching the same drift first.
func MonitorFaultOff() bool {
	return linux.FaultInjection && os.Getenv("TESTONLY_VETTO_FAULT") == "no-monitor"
}

// warmBackendCodecs is the backend's part of WarmCodecs.
func warmBackendCodecs() {
	linux.WarmCodecs()
}
