package runtime

import (
	"errors"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func strictTestSpec() *specs.Spec {
	mem, pids := int64(1<<28), int64(64)
	caps := []string{"CAP_KILL"}
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "/r", Readonly: true},
		Process: &specs.Process{NoNewPrivileges: true, Capabilities: &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}},
		Linux: &specs.Linux{
			Namespaces:  []specs.LinuxNamespace{{Type: "pid"}, {Type: "mount"}, {Type: "network"}, {Type: "ipc"}, {Type: "uts"}},
			Seccomp:     &specs.LinuxSeccomp{DefaultAction: specs.ActErrno},
			Resources:   &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: &mem}, Pids: &specs.LinuxPids{Limit: &pids}},
			MaskedPaths: strictMasked, ReadonlyPaths: strictReadonly,
		},
	}
}

func TestPlan(t *testing.T) {
	floor, err := ParseFloor("floor.toml", []byte("min_level = \"standard\"\n[forbid]\nno_seccomp = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		edit    func(*specs.Spec)
		sec     Security
		environ []string
		floor   *Floor
		kind    error
		level   Level
		tier    string
		want    string // in the error, or in the launch line
	}{
		{"strict bundle at strict", nil, Security{Level: LevelStrict, LevelSet: true}, nil, nil, nil, LevelStrict, "full", "level=strict"},
		{"default is standard", nil, Security{}, nil, nil, nil, LevelStandard, "full", "level=standard"},
		{"annotation raises", func(s *specs.Spec) { s.Annotations = map[string]string{AnnotationLevel: "strict"} }, Security{}, nil, nil, nil, LevelStrict, "full", "level=strict"},
		{"annotation cannot lower an explicit flag", func(s *specs.Spec) { s.Annotations = map[string]string{AnnotationLevel: "degraded"} },
			Security{Level: LevelStrict, LevelSet: true}, nil, nil, nil, LevelStrict, "full", "level=strict"},
		{"bad annotation", func(s *specs.Spec) { s.Annotations = map[string]string{AnnotationLevel: "max"} }, Security{}, nil, nil, ErrInvalidInput, 0, "", "unknown security level"},
		{"strict lists every requirement", func(s *specs.Spec) { s.Linux.Seccomp = nil; s.Process.NoNewPrivileges = false },
			Security{Level: LevelStrict, LevelSet: true}, nil, nil, ErrDegradedRefused, 0, "", "seccomp: no seccomp filter; no_new_privs"},
		{"poisoned env at strict", nil, Security{Level: LevelStrict, LevelSet: true}, []string{"VETTO_X=1", "PATH=/bin"}, nil, ErrDegradedRefused, 0, "", "VETTO_X"},
		{"poisoned env at standard runs", nil, Security{}, []string{"VETTO_X=1"}, nil, nil, LevelStandard, "full", "level=standard"},
		{"floor min level", nil, Security{Level: LevelDegraded, LevelSet: true}, nil, floor, ErrFloorForbids, 0, "", "min_level"},
		{"floor no seccomp", func(s *specs.Spec) { s.Linux.Seccomp = nil }, Security{}, nil, floor, ErrFloorForbids, 0, "", "forbid.no_seccomp"},
		{"annotation with an unknown feature", func(s *specs.Spec) {
			s.Annotations = map[string]string{AnnotationAllowDegraded: "everything"}
		}, Security{}, nil, nil, ErrInvalidInput, 0, "", "unknown feature"},
		{"kernel memory refused at standard", func(s *specs.Spec) {
			tcp := int64(1 << 20)
			s.Linux.Resources = &specs.LinuxResources{Memory: &specs.LinuxMemory{KernelTCP: &tcp}}
		}, Security{}, nil, nil, ErrDegradedRefused, 0, "", "kernel memory limits requested"},
		{"kernel memory with limits degraded", func(s *specs.Spec) {
			kmem := int64(1 << 20)
			//lint:ignore SA1019 deprecated field, still refused when set
			s.Linux.Resources = &specs.LinuxResources{Memory: &specs.LinuxMemory{Kernel: &kmem}}
		}, Security{AllowDegraded: map[string]bool{FeatureLimits: true}}, nil, nil, nil, LevelStandard, "full", "degraded: limits"},
		{"network allowlist at degraded", func(s *specs.Spec) { s.Annotations = map[string]string{AnnotationNet: "allowlist"} },
			Security{Level: LevelDegraded, LevelSet: true}, nil, nil, nil, LevelDegraded, "full", "net=allowlist level=degraded"},
		{"partial tier", func(s *specs.Spec) { s.Linux.Namespaces = s.Linux.Namespaces[:2] }, Security{}, nil, nil, nil, LevelStandard, "partial", "tier=partial net=host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strictTestSpec()
			if tt.edit != nil {
				tt.edit(s)
			}
			r := &Runtime{Backend: &fakeBackend{}, Environ: tt.environ, Floor: tt.floor}
			p, err := r.plan("c1", s, tt.sec)
			if tt.kind != nil {
				if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("plan error = %v, want %v containing %q", err, tt.kind, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Level != tt.level || p.Tier != tt.tier || !strings.Contains(p.LaunchLine(), tt.want) {
				t.Fatalf("plan = level %s tier %s line %q; want %s %s containing %q", p.Level, p.Tier, p.LaunchLine(), tt.level, tt.tier, tt.want)
			}
			if len(p.Hash()) != 64 || !strings.Contains(p.DryRunLine(), "NOT ENFORCED") || strings.Contains(p.DryRunLine(), "tier="+p.Tier) {
				t.Fatalf("hash %q / dry-run line %q", p.Hash(), p.DryRunLine())
			}
		})
	}
}

// The hash is of the canonical form: the same spec hashes the same
// whatever its key order or whitespace, and any change changes it.
func TestSpecHashCanonical(t *testing.T) {
	a, err := specHash([]byte(`{"ociVersion":"1.0.2","root":{"path":"/r","readonly":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := specHash([]byte("{ \"root\": {\"readonly\": true, \"path\": \"/r\"},\n \"ociVersion\": \"1.0.2\" }"))
	c, _ := specHash([]byte(`{"ociVersion":"1.0.2","root":{"path":"/r","readonly":false}}`))
	if a != b {
		t.Errorf("same spec, different hashes: %s %s", a, b)
	}
	if a == c {
		t.Errorf("different specs, same hash")
	}
}

func TestParseFloor(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"ok", "min_level = \"strict\"\n[forbid]\nprivileged = true\ncapabilities = [\"CAP_SYS_ADMIN\"]\n", ""},
		{"unknown key", "min_levl = \"strict\"\n", "unknown keys: min_levl"},
		{"bad level", "min_level = \"max\"\n", "unknown security level"},
		{"bad capability", "[forbid]\ncapabilities = [\"SYS_ADMIN\"]\n", "not a capability name"},
		{"not toml", "min_level = \n", "operator floor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFloor("f.toml", []byte(tt.text))
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("ParseFloor = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseFeatures(t *testing.T) {
	got, err := ParseFeatures([]string{"landlock,limits", " network "})
	if err != nil || !got[FeatureLandlock] || !got[FeatureLimits] || !got[FeatureNetwork] || len(got) != 3 {
		t.Fatalf("ParseFeatures = %v, %v", got, err)
	}
	if _, err := ParseFeatures([]string{"all"}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("unknown feature: %v", err)
	}
}
