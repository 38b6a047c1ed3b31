//go:build windows

package windows

import (
	"fmt"

	"golang.org/x/sys/windows"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// probe checks this host: PROC_THREAD_ATTRIBUTE_JOB_LIST needs Windows 10
// (build 10240), and the AppContainer and restricted-token calls must
// exist. It does not create a container; a launch verifies its own.
func (b *Backend) probe() []runtime.Probe {
	var out []runtime.Probe
	v := windows.RtlGetVersion()
	if v.MajorVersion >= 10 {
		out = append(out, runtime.Probe{Name: probeJobList, Status: runtime.Supported, Detail: fmt.Sprintf("Windows %d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber)})
	} else {
		out = append(out, runtime.Probe{Name: probeJobList, Status: runtime.Unsupported, Detail: fmt.Sprintf("Windows %d.%d: a process can be created inside a job from Windows 10 on", v.MajorVersion, v.MinorVersion)})
	}
	find := func(name string, procs ...*windows.LazyProc) {
		for _, p := range procs {
			if err := p.Find(); err != nil {
				out = append(out, runtime.Probe{Name: name, Status: runtime.Unsupported, Detail: err.Error()})
				return
			}
		}
		out = append(out, runtime.Probe{Name: name, Status: runtime.Supported})
	}
	find(probeAppContainer, procCreateAppContainerProfile, procDeriveAppContainerSidFromAppContainerName, procDeleteAppContainerProfile)
	find(probeToken, procCreateRestrictedToken, procIsProcessInJob)
	return append(out, fixedProbes()...)
}
