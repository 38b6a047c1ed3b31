package darwin

import "github.com/vetto-dev/vetto-runtime/runtime"

// Probe names of doctor.
const (
	probeSandboxExec = "sandbox-exec"
	probeProfile     = "seatbelt-profile"
	probeCheck       = "sandbox_check"
	probePidNS       = "pid-namespace"
	probeLimits      = "limits"
)

var (
	// standardNeeds are what a launch at standard uses: the launcher, the
	// base profile working on this macOS, and the kernel's answers for
	// verification.
	standardNeeds = []string{probeSandboxExec, probeProfile, probeCheck}
	// strictNeeds add a pid namespace, which darwin never has.
	strictNeeds = append(append([]string{}, standardNeeds...), probePidNS, probeLimits)
)

// Doctor probes this host afresh and says which levels it can honour.
func (b *Backend) Doctor() *runtime.Diagnosis { return diagnose(b.probe()) }

func diagnose(probes []runtime.Probe) *runtime.Diagnosis {
	return &runtime.Diagnosis{
		Backend: "darwin",
		Tier:    "seatbelt",
		Probes:  probes,
		Levels:  runtime.LevelsFrom(probes, strictNeeds, standardNeeds),
		Note:    runtime.DiagnosisNote,
	}
}

// fixedProbes are what darwin never has, whatever the host.
func fixedProbes() []runtime.Probe {
	return []runtime.Probe{
		{Name: probePidNS, Status: runtime.Unsupported, Detail: "darwin has no pid namespace: teardown is best-effort by process group (degraded-cleanup)"},
		{Name: probeLimits, Status: runtime.Unsupported, Detail: "no cgroups: memory and pids limits are a degradation (limits)"},
	}
}
