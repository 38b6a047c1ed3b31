package linux

import (
	"strings"
	"testing"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// The rootless user-namespace refusal from recorded facts: Ubuntu 24.04's
// AppArmor restriction (the namespace is made, its map write refused),
// the sysctls that turn user namespaces off, and a host where they work.
// The probe runs only where AppArmor says it may fail.
func TestUsernsRefusal(t *testing.T) {
	refusedMap := func() (runtime.Support, string) {
		return runtime.Unsupported, "cannot write its uid and gid maps: fork/exec: operation not permitted; AppArmor restricts …"
	}
	tests := []struct {
		name  string
		facts usernsFacts
		want  string // substring; "" for no refusal
		probe bool   // the probe must run
	}{
		{"ubuntu 24.04, restricted, no profile", usernsFacts{MaxUserNS: "63000\n", AppArmor: true, Probe: refusedMap}, "cannot write its uid and gid maps", true},
		{"ubuntu 24.04, restricted, profile installed", usernsFacts{MaxUserNS: "63000\n", AppArmor: true,
			Probe: func() (runtime.Support, string) { return runtime.Supported, "" }}, "", true},
		{"max_user_namespaces 0", usernsFacts{MaxUserNS: "0\n"}, "user.max_user_namespaces is 0", false},
		{"debian, unprivileged_userns_clone 0", usernsFacts{MaxUserNS: "63000\n", Clone: "0\n"}, "kernel.unprivileged_userns_clone is 0", false},
		{"debian 12 defaults", usernsFacts{MaxUserNS: "63000\n", Clone: "1\n"}, "", false},
		{"no sysctl files", usernsFacts{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			if tt.facts.Probe != nil {
				probe := tt.facts.Probe
				tt.facts.Probe = func() (runtime.Support, string) { ran = true; return probe() }
			} else {
				tt.facts.Probe = func() (runtime.Support, string) { ran = true; return runtime.Unsupported, "should not run" }
			}
			got := usernsRefusal(tt.facts)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("usernsRefusal = %q, want %q", got, tt.want)
			}
			if ran != tt.probe {
				t.Errorf("probe ran %v, want %v", ran, tt.probe)
			}
		})
	}
}
