package landlock

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, err string
	}{
		{"compiled shape", `{"ruleset":{"handledAccessFS":65535},"rules":{"pathBeneath":[{"allowedAccess":13,"paths":["/","/usr"]}]}}`, ""},
		{"net and scopes", `{"ruleset":{"handledAccessFS":1,"handledAccessNet":3,"scoped":3},"rules":{"netPort":[{"allowedAccess":2,"ports":[443]}]}}`, ""},
		{"empty object", `{}`, "handles no access right"},
		{"unknown field", `{"ruleset":{"handledAccessFS":1},"rules":{"pathBeneath":[]},"extra":1}`, "unknown field"},
		{"unknown rule kind", `{"ruleset":{"handledAccessFS":1},"rules":{"unix":[]}}`, "unknown field"},
		{"unknown fs right", `{"ruleset":{"handledAccessFS":131072}}`, "unknown rights"},
		{"grant outside handled", `{"ruleset":{"handledAccessFS":4},"rules":{"pathBeneath":[{"allowedAccess":6,"paths":["/"]}]}}`, "within handledAccessFS"},
		{"relative path", `{"ruleset":{"handledAccessFS":4},"rules":{"pathBeneath":[{"allowedAccess":4,"paths":["usr"]}]}}`, "absolute, clean"},
		{"dot-dot path", `{"ruleset":{"handledAccessFS":4},"rules":{"pathBeneath":[{"allowedAccess":4,"paths":["/usr/../etc"]}]}}`, "absolute, clean"},
		{"no paths", `{"ruleset":{"handledAccessFS":4},"rules":{"pathBeneath":[{"allowedAccess":4,"paths":[]}]}}`, "empty"},
		{"bad port", `{"ruleset":{"handledAccessNet":1},"rules":{"netPort":[{"allowedAccess":1,"ports":[70000]}]}}`, "not a port"},
		{"trailing data", `{"ruleset":{"handledAccessFS":1}} {}`, "trailing data"},
		{"trailing brace", `{"ruleset":{"handledAccessFS":1}}}`, "trailing data"},
		{"trailing form feed", "{\"ruleset\":{\"handledAccessFS\":1}}\f", "trailing data"},
		{"not json", `rules`, "landlock ruleset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := Parse(tt.in)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				again, err := Parse(rs.Encode())
				if err != nil || !reflect.DeepEqual(again, rs) {
					t.Fatalf("Encode does not round-trip: %s → %+v, %v", rs.Encode(), again, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("Parse(%s) = %v; want an error containing %q", tt.in, err, tt.err)
			}
		})
	}
}

// The ABI matrix: which rights each version enforces.
func TestSupported(t *testing.T) {
	tests := []struct {
		abi  int
		want Handled
	}{
		{0, Handled{}},
		{1, Handled{AccessFS: 1<<13 - 1}},
		{2, Handled{AccessFS: 1<<14 - 1}},
		{3, Handled{AccessFS: 1<<15 - 1}},
		{4, Handled{AccessFS: 1<<15 - 1, AccessNet: 3}},
		{5, Handled{AccessFS: 1<<16 - 1, AccessNet: 3}},
		{6, Handled{AccessFS: 1<<16 - 1, AccessNet: 3, Scoped: 3}},
		{7, Handled{AccessFS: 1<<16 - 1, AccessNet: 3, Scoped: 3}},
	}
	for _, tt := range tests {
		if got := Supported(tt.abi); got != tt.want {
			t.Errorf("Supported(%d) = %+v, want %+v", tt.abi, got, tt.want)
		}
	}
}

func TestUnsupportedAndDowngrade(t *testing.T) {
	// What the policy compiler writes: every fs right up to ABI 5.
	compiled := &Ruleset{Ruleset: Handled{AccessFS: 1<<16 - 1}, Rules: Rules{PathBeneath: []PathBeneath{
		{AllowedAccess: 1<<0 | 1<<2 | 1<<3, Paths: []string{"/"}},
		{AllowedAccess: 1<<16 - 1, Paths: []string{"/tmp"}},
		{AllowedAccess: 1 << 15, Paths: []string{"/dev"}},
	}}}
	tests := []struct {
		abi     int
		missing string
		handled uint64 // after Downgrade
		rules   int
	}{
		{7, "", 1<<16 - 1, 3},
		{5, "", 1<<16 - 1, 3},
		{4, "fs ioctl_dev (ABI 5)", 1<<15 - 1, 2},
		{2, "fs truncate (ABI 3), fs ioctl_dev (ABI 5)", 1<<14 - 1, 2},
		{1, "fs refer (ABI 2), fs truncate (ABI 3), fs ioctl_dev (ABI 5)", 1<<13 - 1, 2},
	}
	for _, tt := range tests {
		if got := Describe(compiled.Unsupported(tt.abi)); got != tt.missing {
			t.Errorf("ABI %d: unsupported %q, want %q", tt.abi, got, tt.missing)
		}
		d := compiled.Downgrade(tt.abi)
		if d.Ruleset.AccessFS != tt.handled || len(d.Rules.PathBeneath) != tt.rules {
			t.Errorf("ABI %d: downgraded to %+v", tt.abi, d)
		}
		if len(d.Unsupported(tt.abi)) != 0 {
			t.Errorf("ABI %d: the downgraded ruleset still handles %s", tt.abi, Describe(d.Unsupported(tt.abi)))
		}
		for _, r := range d.Rules.PathBeneath {
			if r.AllowedAccess&^d.Ruleset.AccessFS != 0 {
				t.Errorf("ABI %d: rule %+v grants unhandled rights", tt.abi, r)
			}
		}
	}
	if d := compiled.Downgrade(0); d != nil {
		t.Errorf("Downgrade(0) = %+v, want nil (nothing left to enforce)", d)
	}
	scoped := &Ruleset{Ruleset: Handled{AccessNet: 3, Scoped: 2}}
	if got := Describe(scoped.Unsupported(3)); got != "net bind_tcp (ABI 4), net connect_tcp (ABI 4), scope signal (ABI 6)" {
		t.Errorf("net/scope at ABI 3: %q", got)
	}
}

func TestKnownABI(t *testing.T) {
	newest := 0
	for _, r := range Rights {
		newest = max(newest, r.ABI)
	}
	if newest != KnownABI {
		t.Fatalf("the newest right in Rights is ABI %d, KnownABI says %d", newest, KnownABI)
	}
}

// BenchmarkParse is the cost of one parse of a policy bundle's ruleset
// (the default policy compiled for a repository), which create's
// evaluator, start's canary plan and the post-launch check each make.
func BenchmarkParse(b *testing.B) {
	a := `{"ruleset":{"handledAccessFS":65535,"handledAccessNet":3,"scoped":3},"rules":{"pathBeneath":[` +
		`{"allowedAccess":16383,"paths":["/work","/tmp","/dev/shm","/home/user/.cache"]},` +
		`{"allowedAccess":8389,"paths":["/usr","/bin","/sbin","/lib","/lib64","/etc","/opt","/home/user/.gitconfig"]},` +
		`{"allowedAccess":3,"paths":["/dev/null","/dev/zero","/dev/urandom","/dev/random","/dev/tty","/proc"]}],` +
		`"netPort":[{"allowedAccess":2,"ports":[8080]}]}}`
	if _, err := Parse(a); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse(a); err != nil {
			b.Fatal(err)
		}
	}
}
