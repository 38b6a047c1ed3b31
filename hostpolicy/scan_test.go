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
		".gitmodules", ".npmrc", "README", "deep/er/.envrc",
		// Bare repositories, found by what they hold; a HEAD alone, or
		// with objects/ but no refs/, is no git directory.
		"fixtures/remote.git/HEAD", "fixtures/remote.git/config", "fixtures/remote.git/objects/", "fixtures/remote.git/refs/",
		"plain/HEAD", "half/HEAD", "half/objects/", "deep/er/HEAD/", "deep/er/objects/", "deep/er/refs/",
		// Hook managers' configuration.
		"web/.husky/pre-commit", "py/.pre-commit-config.yaml", "lefthook.yml", "go/.lefthook-local.toml", ".overcommit.yml", "lefthook.txt",
		// Editors' and coding agents' project settings.
		".claude/settings.json", ".mcp.json", ".devcontainer.json", ".zed/tasks.json", ".cursor/mcp.json",
		".git/modules/sub/objects/", ".git/modules/sub/refs/")
	listen(t, filepath.Join(root, "agent.sock"))
	found, err := Scan([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range found {
		k := strings.TrimPrefix(f.Path, root+"/")
		if _, dup := got[k]; dup {
			t.Errorf("%s found twice", k)
		}
		got[k] = f.Kind.String() + strings.Join(f.Meta, ",")
	}
	want := map[string]string{
		".env": "secret", "app/.env.local": "secret", ".git/.env": "secret", ".npmrc": "secret", "deep/er/.envrc": "secret",
		".git": "repositoryconfig,hooks", ".git/modules/sub": "repositoryconfig,hooks", "sub/.git": "git file",
		".vscode": "tool config", ".gitmodules": "tool config", "agent.sock": "socket",
		"fixtures/remote.git": "repositoryconfig",
		"web/.husky":          "tool config", "py/.pre-commit-config.yaml": "tool config", "lefthook.yml": "tool config",
		"go/.lefthook-local.toml": "tool config", ".overcommit.yml": "tool config",
		".claude": "tool config", ".mcp.json": "tool config", ".devcontainer.json": "tool config", ".zed": "tool config", ".cursor": "tool config",
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
	// The repository has no info/: the bundle's writer makes it.
	if len(plan.Make) != 1 || plan.Make[0] != (spec.HostEntry{Path: proj + "/.git/info", Dir: true}) {
		t.Fatalf("plan.Make = %v, want the missing .git/info", plan.Make)
	}
	if err := MakeHostEntries(plan.Make); err != nil {
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
	plant(t, proj, ".git/.env", "secrets/", ".vscode/settings.json", "nested/.git/config", "nested/.git/HEAD", "bare/HEAD", "bare/objects/", "bare/refs/")
	if err := os.Remove(proj + "/.git/info"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proj+"/.git/config", []byte("[core]\n\thooksPath = .githooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A bound path made a symlink: the bind would show its target.
	if err := os.Remove(proj + "/.git/hooks"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", proj+"/.git/hooks"); err != nil {
		t.Fatal(err)
	}
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
		proj + "/nested/.git/hooks does not exist, and the sandbox could make it",
		"repository " + proj + "/bare is not pinned",
		proj + "/bare/hooks does not exist, and the sandbox could make it",
		proj + "/.git/info, which the bundle shows read-only, no longer exists",
		proj + "/.githooks does not exist, and the sandbox could make it",
		proj + "/.git/hooks, which the bundle binds at " + proj + "/.git/hooks, is now a symlink (to /etc)",
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
	plant(t, dir, "rw/new/.git/config", "rw/new/.git/HEAD", "ro/new/.git/config", "ro/new/.git/HEAD", "unbound/new/.git/HEAD",
		"rw/bare/HEAD", "rw/bare/objects/", "rw/bare/refs/", "ro/bare/HEAD", "ro/bare/objects/", "ro/bare/refs/")
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
		{"written where it was writable", spec(`["`+dir+`/rw"]`, bind("rw", "/rw")), []string{dir + "/rw/bare/HEAD", dir + "/rw/new/.git"}, ""},
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

// Quarantine leaves nothing git takes for a repository: a planted .git is
// renamed and its HEAD moved aside inside it, a bare repository has its
// HEAD moved aside, and a repository planted inside a planted .git is
// moved before the .git that holds it.
func TestQuarantineLeavesNoGitDirectory(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	plant(t, dir, "p/src/.git/HEAD", "p/src/.git/objects/", "p/src/.git/refs/", "p/src/.git/config",
		"p/src/.git/modules/x/HEAD", "p/src/.git/modules/x/config", "p/src/.git/modules/x/objects/", "p/src/.git/modules/x/refs/",
		"p/tools.git/HEAD", "p/tools.git/objects/", "p/tools.git/refs/", "p/sub/.git")
	s := &specs.Spec{
		Mounts:      []specs.Mount{{Type: "bind", Source: dir + "/p", Destination: "/p", Options: []string{"rbind", "rw"}}},
		Annotations: map[string]string{"dev.vetto.scan": `["` + dir + `/p"]`, "dev.vetto.repos": "[]"},
	}
	moved, err := Quarantine(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		dir + "/p/src/.git -> " + dir + "/p/src/.git.vetto-quarantined (its HEAD -> HEAD.vetto-quarantined)",
		dir + "/p/src/.git/modules/x/HEAD -> " + dir + "/p/src/.git/modules/x/HEAD.vetto-quarantined",
		dir + "/p/sub/.git -> " + dir + "/p/sub/.git.vetto-quarantined",
		dir + "/p/tools.git/HEAD -> " + dir + "/p/tools.git/HEAD.vetto-quarantined",
	}
	if strings.Join(moved, "\n") != strings.Join(want, "\n") {
		t.Errorf("moved:\n%s\nwant:\n%s", strings.Join(moved, "\n"), strings.Join(want, "\n"))
	}
	found, err := Scan([]string{dir + "/p"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if f.Kind == spec.FoundRepo || f.Kind == spec.FoundGitFile {
			t.Errorf("%s is still a %s after quarantine", f.Path, f.Kind)
		}
	}
	for _, gone := range []string{"/p/src/.git.vetto-quarantined/HEAD", "/p/tools.git/HEAD"} {
		if _, err := os.Lstat(dir + gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
}

// HooksDirs: where each repository's core.hooksPath sends git for hooks,
// resolved as git resolves it.
func TestHooksDirs(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := os.UserHomeDir()
	repo := func(path string) spec.Found { return spec.Found{Path: filepath.Join(dir, path), Kind: spec.FoundRepo} }
	tests := []struct {
		name   string
		repo   spec.Found
		config string
		base   string
		want   string
	}{
		{"relative to the work tree", repo("p/.git"), "[core]\n\thooksPath = .githooks\n", "", dir + "/p/.githooks"},
		{"husky", repo("p/.git"), "[core]\n\thooksPath = .husky/_\n", "", dir + "/p/.husky/_"},
		{"absolute", repo("p/.git"), "[core]\n\thooksPath = " + dir + "/shared\n", "", dir + "/shared"},
		{"a bare repository's own directory", repo("p/remote.git"), "[core]\n\thooksPath = h\n", "", dir + "/p/remote.git/h"},
		{"core.worktree", repo("p/.git/modules/sub"), "[core]\n\tworktree = ../../../sub\n\thooksPath = hooks2\n", "", dir + "/p/sub/hooks2"},
		{"the user's config", repo("p/.git"), "", "[core]\n\thooksPath = .hooks\n", dir + "/p/.hooks"},
		{"the repository's config wins", repo("p/.git"), "[core]\n\thooksPath = mine\n", "[core]\n\thooksPath = .hooks\n", dir + "/p/mine"},
		{"home", repo("p/.git"), "[core]\n\thooksPath = ~/hooks\n", "", filepath.Join(realPath(home), "hooks")},
		{"the git directory's own hooks", repo("p/.git"), "[core]\n\thooksPath = .git/hooks\n", "", ""},
		{"none", repo("p/.git"), "[core]\n\tbare = false\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configs := map[string]string{filepath.Join(tt.repo.Path, "config"): tt.config}
			got := HooksDirs([]spec.Found{tt.repo}, configs, tt.base)
			var paths []string
			for _, f := range got {
				if f.Kind != spec.FoundHooksDir {
					t.Errorf("%s: kind %s", f.Path, f.Kind)
				}
				paths = append(paths, f.Path)
			}
			if strings.Join(paths, ",") != tt.want {
				t.Errorf("got %v, want %q", paths, tt.want)
			}
		})
	}
}

// A sandbox still running on the same project can put a symlink in place
// of a directory after the scan: moving aside what the scan found must
// not follow it to rename a repository elsewhere, and must never replace
// what already has the quarantined name.
func TestMoveAsideFollowsNoSymlink(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	plant(t, dir, "victim/.git/HEAD", "p/sub/.git/HEAD", "p/again/.git/HEAD", "p/again/.git.vetto-quarantined/HEAD")
	// The scan saw p/sub/.git; then sub became a symlink to the victim.
	if err := os.Rename(dir+"/p/sub", dir+"/p/sub-old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir+"/victim", dir+"/p/sub"); err != nil {
		t.Fatal(err)
	}
	if dst, err := moveAside(dir + "/p/sub/.git"); err == nil {
		t.Errorf("moved %s through a symlink", dst)
	}
	if _, err := os.Lstat(dir + "/victim/.git/HEAD"); err != nil {
		t.Errorf("the victim's repository was moved: %v", err)
	}
	dst, err := moveAside(dir + "/p/again/.git")
	if err != nil || dst != dir+"/p/again/.git.vetto-quarantined.1" {
		t.Errorf("moveAside = %q, %v; want the .1 name beside the taken one", dst, err)
	}
}
