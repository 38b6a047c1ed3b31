package windows

import "github.com/vetto-dev/vetto-runtime/runtime"

// Probe names of doctor.
const (
	probeJobList      = "job-list-attribute"
	probeAppContainer = "appcontainer"
	probeToken        = "restricted-token"
	probeNamespaces   = "namespaces"
)

var (
	// standardNeeds are what every launch uses.
	standardNeeds = []string{probeJobList, probeAppContainer, probeToken}
	// strictNeeds add namespaces, which Windows processes do not have.
	strictNeeds = append(append([]string{}, standardNeeds...), probeNamespaces)
)

// Doctor probes this host afresh and says which levels it can honour.
func (b *Backend) Doctor() *runtime.Diagnosis { return diagnose(b.probe()) }

func diagnose(probes []runtime.Probe) *runtime.Diagnosis {
	return &runtime.Diagnosis{
		Backend: "windows",
		Tier:    "job+appcontainer",
		Probes:  probes,
		Levels:  runtime.LevelsFrom(probes, strictNeeds, standardNeeds),
		Note:    runtime.DiagnosisNote,
	}
}

func fixedProbes() []runtime.Probe {
	return []runtime.Probe{{Name: probeNamespaces, Status: runtime.Unsupported, Detail: "a host process has no pid, mount or network namespace; strict is refused"}}
}
