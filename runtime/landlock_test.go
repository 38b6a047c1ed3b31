package runtime

import (
	"errors"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/landlock"
)

// The plan negotiates the Landlock ABI explicitly: exact at any level when
// the host enforces every handled right; otherwise refused naming the
// missing rights, unless the level accepts the degradation — then the
// shim gets what the host enforces and the rest is recorded.
func TestPlanLandlock(t *testing.T) {
	// What the policy compiler writes: every fs right up to ABI 5.
	const compiled = `{"ruleset":{"handledAccessFS":65535},"rules":{"pathBeneath":[{"allowedAccess":13,"paths":["/"]},{"allowedAccess":65535,"paths":["/tmp"]}]}}`
	strict := Security{Level: LevelStrict, LevelSet: true}
	tests := []struct {
		name    string
		edit    func(*specs.Spec)
		sec     Security
		abi     int
		abiErr  error
		kind    error
		want    string // in the error, or in the launch line
		handled uint64 // handledAccessFS the shim gets; 0: no shim
	}{
		{"exact at strict", nil, strict, 7, nil, nil, "level=strict", 65535},
		{"exact at ABI 5", nil, Security{}, 5, nil, nil, "level=standard", 65535},
		{"strict names the missing right", nil, strict, 4, nil, ErrDegradedRefused, "ABI 4 does not enforce fs ioctl_dev (ABI 5), which dev.vetto.landlock handles; level strict allows no degradation", 0},
		{"strict with opt-in still refuses", nil, Security{Level: LevelStrict, LevelSet: true, AllowDegraded: map[string]bool{FeatureLandlock: true}}, 4, nil, ErrDegradedRefused, "allows no degradation", 0},
		{"standard refuses", nil, Security{}, 2, nil, ErrDegradedRefused, "fs truncate (ABI 3), fs ioctl_dev (ABI 5)", 0},
		{"standard refusal says how to accept", nil, Security{}, 2, nil, ErrDegradedRefused, "--allow-degraded=landlock", 0},
		{"standard with opt-in", nil, Security{AllowDegraded: map[string]bool{FeatureLandlock: true}}, 4, nil, nil, "degraded: landlock: the host's Landlock ABI 4 does not enforce fs ioctl_dev (ABI 5)", 32767},
		{"bundle accepts it at standard", func(s *specs.Spec) { s.Annotations[AnnotationAllowDegraded] = "landlock" }, Security{}, 1, nil, nil, "degraded: landlock", 8191},
		{"bundle accepts nothing at strict", func(s *specs.Spec) { s.Annotations[AnnotationAllowDegraded] = "landlock" }, strict, 1, nil, ErrDegradedRefused, "allows no degradation", 0},
		{"degraded without Landlock", nil, Security{Level: LevelDegraded, LevelSet: true}, 0, nil, nil, "degraded: landlock: the host has no Landlock", 0},
		{"no no_new_privs", func(s *specs.Spec) { s.Process.NoNewPrivileges = false }, Security{}, 7, nil, ErrInvalidInput, "noNewPrivileges: true", 0},
		{"no /proc", func(s *specs.Spec) { s.Mounts = nil }, Security{}, 7, nil, ErrInvalidInput, "proc mount at /proc", 0},
		{"bad ruleset", func(s *specs.Spec) { s.Annotations[AnnotationLandlock] = "{}" }, Security{Level: LevelDegraded, LevelSet: true}, 7, nil, ErrInvalidInput, "handles no access right", 0},
		{"probe fails", nil, Security{}, 0, errors.New("EIO"), ErrBackendUnavailable, "EIO", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strictTestSpec()
			s.Mounts = []specs.Mount{{Destination: "/proc", Type: "proc", Source: "proc"}}
			s.Annotations = map[string]string{AnnotationLandlock: compiled}
			if tt.edit != nil {
				tt.edit(s)
			}
			r := &Runtime{Backend: &fakeBackend{}, LandlockABI: func() (int, error) { return tt.abi, tt.abiErr }}
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
			if !strings.Contains(p.LaunchLine(), tt.want) {
				t.Fatalf("launch line %q, want %q", p.LaunchLine(), tt.want)
			}
			if tt.handled == 0 {
				if p.Landlock != "" {
					t.Fatalf("plan runs the shim with %s; want none", p.Landlock)
				}
				return
			}
			rs, err := landlock.Parse(p.Landlock)
			if err != nil {
				t.Fatalf("the shim's ruleset %q: %v", p.Landlock, err)
			}
			if rs.Ruleset.AccessFS != tt.handled || len(rs.Unsupported(tt.abi)) != 0 {
				t.Fatalf("the shim's ruleset handles %d (unsupported: %s); want %d", rs.Ruleset.AccessFS, landlock.Describe(rs.Unsupported(tt.abi)), tt.handled)
			}
			// The frozen spec keeps the bundle's annotation: the hash says
			// what was asked, the record what is enforced.
			if got := p.frozen.spec.Annotations[AnnotationLandlock]; got != s.Annotations[AnnotationLandlock] {
				t.Fatalf("frozen annotation changed to %q", got)
			}
		})
	}
}
