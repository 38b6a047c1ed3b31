package hostpolicy

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

func plant(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// listen makes a unix socket at p, as an ssh-agent would.
func listen(t *testing.T, p string) {
	t.Helper()
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
}

// The scan finds secrets anywhere under a root, .git included (a .env
// moved into .git is still a secret, 12.4), sockets, repositories with
// their metadata and submodules, .git files and tool configuration.
func TestScan(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	plant(t, root,
		".env", "app/.env.local", "app/.env.example", ".git/.env", ".git/config", ".git/hooks/pre-commit", ".git/HEAD",
		".git/modules/sub/config", ".git/modules/sub/HEAD", ".git/modules/sub/hooks/", "sub/.git", ".vscode/tasks.json",
		".gitmodules", ".npmrc", "README", "deep/er/.envrc")
	listen(t, filepath.Join(root, "agent.sock"))
	found, err := Scan([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range found {
		got[strings.TrimPrefix(f.Path, root+"/")] = f.Kind.String() + strings.Join(f.Meta, ",")
	}
	want := map[string]string{
		".env": "secret", "app/.env.local": "secret", ".git/.env": "secret", ".npmrc": "secret", "deep/er/.envrc": "secret",
		".git": "repositoryconfig,hooks", ".git/modules/sub": "repositoryconfig,hooks", "sub/.git": "git file",
		".vscode": "tool config", ".gitmodules": "tool config", "agent.sock": "socket",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("found %s (%s), which is nothing", k, got[k])
		}
	}
}

// Drift: a policy bundle checked against a host that changed since it was
// compiled (12.4): a secret now in .git, a denied path that now exists, a
// socket planted, a repository with its metadata writable, a stripped
// file changed. The bundle as compiled for the host as it was holds.
func TestDrift(t *testing.T) {
	proj, _ := filepath.EvalSymlinks(t.TempDir())
	plant(t, proj, "README", ".git/config", ".git/HEAD", ".git/hooks/")
	p, err := spec.ProfilePolicy("default")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compile(p, Options{Project: proj, Args: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	// The bundle's relative sources, as create resolves them.
	resolved, err := spec.Resolve(plan.Spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if d, err := Drift(resolved); err != nil || len(d) != 0 {
		t.Fatalf("a fresh bundle drifts: %v %v", d, err)
	}
	plant(t, proj, ".git/.env", "secrets/", ".vscode/settings.json", "nested/.git/config", "nested/.git/HEAD")
	listen(t, filepath.Join(proj, "ssh-agent.sock"))
	d, err := Drift(resolved)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(d, "\n")
	for _, want := range []string{
		proj + "/.git/.env (secret) shows unmasked",
		proj + "/ssh-agent.sock (socket) shows unmasked",
		proj + "/.vscode (tool config) is writable",
		"repository " + proj + "/nested/.git is not pinned",
		proj + "/nested/.git/config (repository metadata) is writable",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("drift lacks %q:\n%s", want, all)
		}
	}
}

// A mask covered by a later mount does not count.
func TestMaskedView(t *testing.T) {
	s := &specs.Spec{Mounts: []specs.Mount{
		{Destination: "/p", Type: "bind", Source: "/p", Options: []string{"rw"}},
		{Destination: "/p/.env", Type: "bind", Source: "/dev/null", Options: []string{"ro"}},
		{Destination: "/p", Type: "bind", Source: "/p", Options: []string{"rw"}},
	}}
	if m := newMountView(s); m.masked("/p/.env") {
		t.Fatal("a mask under a later bind of its parent counts as a mask")
	}
	s.Mounts = s.Mounts[:2]
	if m := newMountView(s); !m.masked("/p/.env") {
		t.Fatal("the mask does not count")
	}
}

// TestPlantedOnlyWhereTheSandboxWrites: the scan roots and the known
// repositories are the bundle's annotations; what teardown may move aside
// is decided by the bundle's mounts.
func TestPlantedOnlyWhereTheSandboxWrites(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	plant(t, dir, "rw/new/.git/config", "rw/new/.git/HEAD", "ro/new/.git/config", "ro/new/.git/HEAD", "unbound/new/.git/HEAD")
	spec := func(scan string, mounts ...specs.Mount) *specs.Spec {
		return &specs.Spec{Mounts: mounts, Annotations: map[string]string{"dev.vetto.scan": scan, "dev.vetto.repos": "[]"}}
	}
	bind := func(src, dst string, opts ...string) specs.Mount {
		return specs.Mount{Type: "bind", Source: filepath.Join(dir, src), Destination: dst, Options: append([]string{"rbind"}, opts...)}
	}
	tests := []struct {
		name    string
		s       *specs.Spec
		planted []string
		err     string
	}{
		{"written where it was writable", spec(`["`+dir+`/rw"]`, bind("rw", "/rw")), []string{dir + "/rw/new/.git"}, ""},
		{"bound read-only", spec(`["`+dir+`/ro"]`, bind("ro", "/ro", "ro")), nil, ""},
		{"a scan root no bind shows", spec(`["`+dir+`/unbound"]`, bind("rw", "/rw")), nil, "no bind of the bundle shows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Planted(tt.s)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Planted: %v, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != strings.Join(tt.planted, ",") {
				t.Fatalf("Planted: %v, %v; want %v", got, err, tt.planted)
			}
		})
	}
}
