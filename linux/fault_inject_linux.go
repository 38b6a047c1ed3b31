//go:build vetto_faultinject

package linux

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"

	"github.com/vetto-dev/vetto-runtime/shim"
)

// FaultInjection is compiled in only with the vetto_faultinject build tag,
// for the integration tests that prove the pre-launch verification catches
// a backend that built something other than the frozen spec. It changes
// the libcontainer config *after* the spec was frozen and hashed, as a bug
// in the backend would:
//
//	TESTONLY_VETTO_FAULT=host-netns       join the runtime's (the host's) network namespace
//	TESTONLY_VETTO_FAULT=add-cap:CAP_X    give the process CAP_X too (more
//	                                      privilege than the spec: less would
//	                                      be a recorded note, not a failure)
//	TESTONLY_VETTO_FAULT=no-mask:/PATH    do not mask /PATH of linux.maskedPaths
//	TESTONLY_VETTO_FAULT=no-landlock-shim  run the process without the Landlock
//	                                      restriction of the pre-exec step
//	TESTONLY_VETTO_FAULT=exec-unconfined  exec runs its process without the Landlock
//	                                      restriction: the attacker a test needs
//	                                      in a Landlocked container
//	TESTONLY_VETTO_FAULT=weaker-ruleset   in the container's environment: the
//	                                      pre-exec step restricts the process with
//	                                      a weaker ruleset than the plan's (write
//	                                      access to /), as a broken step would
//	TESTONLY_VETTO_FAULT=no-monitor       start no monitor (platform/), so a test of
//	                                      verify is not raced by the monitor
//	TESTONLY_VETTO_FAULT=apparmor-userns  a rootless runtime sees AppArmor's
//	                                      restriction of user namespaces on, and
//	                                      its probe's map write is refused (a map
//	                                      of an id not its own), as the
//	                                      restriction refuses it
//	TESTONLY_VETTO_FAULT=no-rlimits       set none of the spec's rlimits: the
//	                                      process keeps the runtime's
//	TESTONLY_VETTO_FAULT=add-env:NAME=V   give the process NAME=V too (a host
//	                                      variable leaking into the container)
//	TESTONLY_VETTO_FAULT=slow-facts:<dur> every host scan of a pid namespace
//	                                      takes <dur> longer (platform/), so a
//	                                      monitor round is slow
//	TESTONLY_VETTO_FAULT=slow-cgroup-facts:<dur> every host read of a
//	                                      cgroup's members takes <dur> longer
//	                                      (platform/), so create can be killed
//	                                      during its pre-launch verification
//	TESTONLY_VETTO_FAULT=slow-signals:<dur> a foreground run registers the
//	                                      signals that are not urgent <dur>
//	                                      later (foreground_linux.go), so a
//	                                      test can signal the runtime while
//	                                      they are still uncaught
//	TESTONLY_VETTO_FAULT=shim-pause:<dur> in the container's environment: the
//	                                      pre-exec step sleeps <dur> before it
//	                                      restricts the init, so a test can attack it
//
// weaker-ruleset and shim-pause act in the container's init: they are in
// linux/containerinit (fault_inject_linux.go there).
//
// The variable does not start with VETTO_ so that it is not refused as a
// poisoned environment before the fault can be observed at standard.
const FaultInjection = true

func injectFault(config *configs.Config, proc *libcontainer.Process) {
	fault := os.Getenv("TESTONLY_VETTO_FAULT")
	switch {
	case fault == "host-netns":
		for i := range config.Namespaces {
			if config.Namespaces[i].Type == configs.NEWNET {
				config.Namespaces[i].Path = "/proc/" + strconv.Itoa(os.Getpid()) + "/ns/net"
			}
		}
		config.Networks = nil
	case strings.HasPrefix(fault, "no-mask:"):
		p := strings.TrimPrefix(fault, "no-mask:")
		config.MaskPaths = slices.DeleteFunc(slices.Clone(config.MaskPaths), func(m string) bool { return m == p })
	case fault == "no-landlock-shim":
		if step, err := shim.Decode(proc.PreExec); err == nil {
			step.Ruleset = ""
			proc.PreExec = step.Encode()
			if step.Empty() {
				proc.PreExec = nil
			}
		}
	case fault == "no-rlimits":
		proc.Rlimits, proc.FinalRlimits = nil, nil
	case strings.HasPrefix(fault, "add-env:"):
		proc.Env = append(slices.Clone(proc.Env), strings.TrimPrefix(fault, "add-env:"))
	case strings.HasPrefix(fault, "add-cap:"):
		c := strings.TrimPrefix(fault, "add-cap:")
		if proc.Capabilities == nil {
			proc.Capabilities = &configs.Capabilities{}
		}
		add := func(list []string) []string {
			if slices.Contains(list, c) {
				return list
			}
			return append(slices.Clone(list), c)
		}
		proc.Capabilities.Effective = add(proc.Capabilities.Effective)
		proc.Capabilities.Permitted = add(proc.Capabilities.Permitted)
		proc.Capabilities.Bounding = add(proc.Capabilities.Bounding)
	}
}

// execUnconfined makes exec skip the Landlock shim.
func execUnconfined() bool { return os.Getenv("TESTONLY_VETTO_FAULT") == "exec-unconfined" }

func faultUsernsMaps() bool { return os.Getenv("TESTONLY_VETTO_FAULT") == "apparmor-userns" }

// slowSignals delays the registration of the signals that are not urgent.
func slowSignals() {
	if v, ok := strings.CutPrefix(os.Getenv("TESTONLY_VETTO_FAULT"), "slow-signals:"); ok {
		if d, err := time.ParseDuration(v); err == nil {
			time.Sleep(d)
		}
	}
}
