package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fakeHost is the machine the tests compile for: a merged-/usr Debian with
// a developer's home, a project, and a few secrets.
var fakeHost = map[string]PathInfo{
	"/usr":                             dir("/usr"),
	"/usr/share":                       dir("/usr/share"),
	"/bin":                             dir("/usr/bin"),
	"/sbin":                            dir("/usr/sbin"),
	"/lib":                             dir("/usr/lib"),
	"/lib64":                           dir("/usr/lib64"),
	"/etc":                             dir("/etc"),
	"/etc/resolv.conf":                 file("/etc/resolv.conf"),
	"/etc/shadow":                      file("/etc/shadow"),
	"/etc/gshadow":                     file("/etc/gshadow"),
	"/etc/sudoers":                     file("/etc/sudoers"),
	"/etc/sudoers.d":                   dir("/etc/sudoers.d"),
	"/etc/ssh":                         dir("/etc/ssh"),
	"/etc/ssh/ssh_host_ed25519_key":    file("/etc/ssh/ssh_host_ed25519_key"),
	"/etc/ssl/private":                 dir("/etc/ssl/private"),
	"/home/dev":                        dir("/home/dev"),
	"/home/dev/.ssh":                   dir("/home/dev/.ssh"),
	"/home/dev/.aws":                   dir("/home/dev/.aws"),
	"/home/dev/.netrc":                 file("/home/dev/.netrc"),
	"/home/dev/.config":                dir("/home/dev/.config"),
	"/home/dev/.config/gcloud":         dir("/home/dev/.config/gcloud"),
	"/home/dev/.gitconfig":             file("/home/dev/dotfiles/gitconfig"),
	"/home/dev/dotfiles/gitconfig":     file("/home/dev/dotfiles/gitconfig"),
	"/home/dev/src/app":                dir("/home/dev/src/app"),
	"/home/dev/src/app/.env":           file("/home/dev/src/app/.env"),
	"/home/dev/src/app/sub/.env.local": file("/home/dev/src/app/sub/.env.local"),
	"/home/dev/src/app/secrets":        dir("/home/dev/src/app/secrets"),
	"/home/dev/src/app/out":            dir("/home/dev/src/app/out"),
	"/home/dev/src/app/.git":           dir("/home/dev/src/app/.git"),
	"/home/dev/src/app/.git/config":    file("/home/dev/src/app/.git/config"),
	"/home/dev/src/app/.git/hooks":     dir("/home/dev/src/app/.git/hooks"),
	"/home/dev/src/app/.vscode":        dir("/home/dev/src/app/.vscode"),
	"/home/dev/src/app/agent.sock":     file("/home/dev/src/app/agent.sock"),
	"/home/dev/src/app/etc-link":       dir("/etc"),
	"/home/dev/src/app/up":             dir("/home/dev"),
	"/tmp":                             dir("/tmp"),
	"/tmp/cache":                       dir("/tmp/cache"),
	"/opt/tools":                       dir("/opt/tools"),
	"/opt/tools/license.key":           file("/opt/tools/license.key"),
	"/data/rw":                         dir("/data/rw"),
	"/srv/rootfs":                      dir("/srv/rootfs"),
	"/etc/app/secret.conf":             file("/etc/app/secret.conf"),
}

func dir(real string) PathInfo  { return PathInfo{Kind: PathDir, Real: real} }
func file(real string) PathInfo { return PathInfo{Kind: PathFile, Real: real} }

// fakeLookup answers from fakeHost; a missing path gets its deepest known
// parent's real location, as the CLI's lookup does.
func fakeLookup(path string) PathInfo {
	if info, ok := fakeHost[path]; ok {
		return info
	}
	for p := filepath.Dir(path); p != "/"; p = filepath.Dir(p) {
		if info, ok := fakeHost[p]; ok {
			return PathInfo{Kind: PathMissing, Real: filepath.Join(info.Real, strings.TrimPrefix(path, p))}
		}
	}
	return PathInfo{Kind: PathMissing, Real: path}
}

func testInputs() Inputs {
	return Inputs{
		Project: "/home/dev/src/app",
		Home:    "/home/dev",
		Tmp:     "/tmp",
		UID:     0,
		GID:     0,
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/dev", "TERM=xterm-256color", "LANG=C.UTF-8",
			"GOFLAGS=-mod=mod", "FOO_TOKEN=hunter2", "AWS_REGION=eu-west-1", "UNLISTED=1",
			"NPM_CONFIG_REGISTRY=https://registry.npmjs.org/", "NPM_CONFIG__AUTH=c2VjcmV0",
		},
		Args: []string{"make", "test"},
		Arch: "amd64",
		Found: []Found{
			{Path: "/home/dev/src/app/.env", Kind: FoundSecret},
			{Path: "/home/dev/src/app/sub/.env.local", Kind: FoundSecret},
			{Path: "/home/dev/src/app/.git", Kind: FoundRepo, Meta: []string{"config", "hooks"}},
			{Path: "/home/dev/src/app/.vscode", Kind: FoundToolConfig},
			{Path: "/home/dev/src/app/agent.sock", Kind: FoundSocket},
		},
		GitConfigs: map[string]string{
			"/home/dev/src/app/.git/config": "[remote \"origin\"]\n\turl = https://x-access-token:ghs_abcdefghijklmnopqrstuvwxyz0123@example.com/o/r.git\n",
		},
		ProjectUID: 1000, ProjectGID: 1000,
		Lookup: fakeLookup,
		// The bundle's own verification hooks run this binary.
		RuntimePath: "/usr/local/bin/vetto-runtime",
	}
}

// goldenInputs changes the inputs for the goldens that need it.
var goldenInputs = map[string]func(*Inputs){
	"rootless": func(in *Inputs) { in.UID, in.GID = 1000, 1000 },
	"rootfs":   func(in *Inputs) { in.Rootfs = "/srv/rootfs" },
}

// TestCompileGolden compiles each testdata/compile/*.toml for the fake
// host and compares the spec with the .json beside it, and the warnings
// with the .warnings file. `go test ./spec -update` rewrites both.
func TestCompileGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/compile/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden policies: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".toml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ParsePolicy(data, filepath.Base(f))
			if err != nil {
				t.Fatalf("ParsePolicy: %v", err)
			}
			in := testInputs()
			if edit := goldenInputs[name]; edit != nil {
				edit(&in)
			}
			pl, err := Explain(p, in)
			if err != nil {
				t.Fatalf("Explain: %v", err)
			}
			got, err := json.MarshalIndent(pl.Spec, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			warnings := []byte(strings.Join(pl.Warnings, "\n"))
			if len(warnings) > 0 {
				warnings = append(warnings, '\n')
			}
			golden(t, strings.TrimSuffix(f, ".toml")+".json", got)
			golden(t, strings.TrimSuffix(f, ".toml")+".warnings", warnings)

			// Compile is a pure function: twice, the same bytes.
			again, err := Compile(p, in)
			if err != nil {
				t.Fatal(err)
			}
			againJSON, _ := json.MarshalIndent(again, "", "  ")
			if !bytes.Equal(append(againJSON, '\n'), got) {
				t.Fatal("a second Compile gave a different spec")
			}
			if err := Validate(again); err != nil {
				t.Fatalf("compiled spec does not validate: %v", err)
			}
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if len(got) == 0 {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			return
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		want = nil
	} else if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (run go test ./spec -update and review the diff):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func mustParse(t *testing.T, src string) *Policy {
	t.Helper()
	p, err := ParsePolicy([]byte(src), "p.toml")
	if err != nil {
		t.Fatalf("ParsePolicy: %v", err)
	}
	return p
}

func mountAt(s *specs.Spec, dest string) *specs.Mount {
	var found *specs.Mount
	for i := range s.Mounts {
		if s.Mounts[i].Destination == dest {
			found = &s.Mounts[i]
		}
	}
	return found
}

// What the compiled spec must say, property by property, beside the
// goldens (which say everything but explain nothing).
func TestCompileProperties(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		edit   func(*Inputs)
		check  func(t *testing.T, s *specs.Spec)
	}{
		{"project read-write at its own path, cwd there", ``, nil, func(t *testing.T, s *specs.Spec) {
			m := mountAt(s, "/home/dev/src/app")
			if m == nil || !contains(m.Options, "rw") || m.Source != "/home/dev/src/app" {
				t.Fatalf("project mount %+v, want a rw bind at the same path", m)
			}
			if s.Process.Cwd != "/home/dev/src/app" {
				t.Errorf("cwd %q", s.Process.Cwd)
			}
		}},
		{"merged /usr: /bin is bound from /usr/bin", ``, nil, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/bin"); m == nil || m.Source != "/usr/bin" || !contains(m.Options, "ro") {
				t.Fatalf("/bin mount %+v", m)
			}
			if m := mountAt(s, "/lib32"); m != nil {
				t.Errorf("/lib32 does not exist on the host but is mounted: %+v", m)
			}
		}},
		{"/etc/shadow is /dev/null, /etc/sudoers.d an empty tmpfs", ``, nil, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/etc/shadow"); m == nil || m.Source != "/dev/null" || !contains(m.Options, "nodev") {
				t.Errorf("/etc/shadow %+v", m)
			}
			if m := mountAt(s, "/etc/sudoers.d"); m == nil || m.Type != "tmpfs" || !contains(m.Options, "ro") {
				t.Errorf("/etc/sudoers.d %+v", m)
			}
		}},
		{"project .env files masked", ``, nil, func(t *testing.T, s *specs.Spec) {
			for _, p := range []string{"/home/dev/src/app/.env", "/home/dev/src/app/sub/.env.local"} {
				if m := mountAt(s, p); m == nil || m.Source != "/dev/null" {
					t.Errorf("%s %+v", p, m)
				}
			}
		}},
		{"$HOME secrets not visible need no mount", ``, nil, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/home/dev/.ssh"); m != nil {
				t.Errorf("$HOME/.ssh masked though $HOME is a fresh tmpfs: %+v", m)
			}
			if m := mountAt(s, "/home/dev"); m == nil || m.Type != "tmpfs" {
				t.Errorf("$HOME %+v, want a fresh tmpfs", m)
			}
		}},
		{"masks come after every bind", `[filesystem]
allow_read = ["$HOME"]`, nil, func(t *testing.T, s *specs.Spec) {
			lastBind, firstMask := -1, len(s.Mounts)
			for i, m := range s.Mounts {
				if m.Source == "/dev/null" || (m.Type == "tmpfs" && contains(m.Options, "ro")) {
					firstMask = min(firstMask, i)
				} else if m.Type == "bind" {
					lastBind = i
				}
			}
			if lastBind > firstMask {
				t.Fatalf("bind %d after mask %d: %+v", lastBind, firstMask, s.Mounts)
			}
			if m := mountAt(s, "/home/dev/.ssh"); m == nil || m.Type != "tmpfs" {
				t.Errorf("$HOME readable but .ssh not masked: %+v", m)
			}
		}},
		{"a symlinked read is bound from its target at the written path", `[filesystem]
allow_read = ["$HOME/.gitconfig"]`, nil, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/home/dev/.gitconfig"); m == nil || m.Source != "/home/dev/dotfiles/gitconfig" {
				t.Fatalf("%+v", m)
			}
		}},
		{"no network: own netns, annotation off", ``, nil, func(t *testing.T, s *specs.Spec) {
			if !hasNamespace(s, specs.NetworkNamespace) || s.Annotations[AnnotationNet] != "off" {
				t.Fatalf("namespaces %v annotations %v", s.Linux.Namespaces, s.Annotations)
			}
		}},
		{"every namespace, and a user namespace for root too (12.2)", ``, nil, func(t *testing.T, s *specs.Spec) {
			for _, ns := range []specs.LinuxNamespaceType{specs.PIDNamespace, specs.NetworkNamespace, specs.IPCNamespace, specs.UTSNamespace, specs.MountNamespace, specs.CgroupNamespace, specs.UserNamespace} {
				if !hasNamespace(s, ns) {
					t.Errorf("no %s namespace", ns)
				}
			}
			// A root caller in a project owned by uid 1000: the sandbox's
			// root is 1000 on the host, never 0.
			u, g := s.Linux.UIDMappings, s.Linux.GIDMappings
			if len(u) != 1 || u[0].ContainerID != 0 || u[0].HostID != 1000 || u[0].Size != 1 || len(g) != 1 || g[0].HostID != 1000 {
				t.Fatalf("mappings %+v %+v, want 0 -> the project's owner 1000", u, g)
			}
			if m := mountAt(s, "/home/dev/src/app"); m == nil || len(m.UIDMappings) != 0 {
				t.Errorf("the project bind is id-mapped though its owner is the sandbox's root: %+v", m)
			}
		}},
		{"root caller, root-owned project: the sandbox id, the project id-mapped", ``, func(in *Inputs) { in.ProjectUID, in.ProjectGID = 0, 0 }, func(t *testing.T, s *specs.Spec) {
			u, g := s.Linux.UIDMappings, s.Linux.GIDMappings
			if len(u) != 1 || u[0].HostID != DefaultSandboxID || len(g) != 1 || g[0].HostID != DefaultSandboxID {
				t.Fatalf("mappings %+v %+v, want 0 -> %d", u, g, DefaultSandboxID)
			}
			m := mountAt(s, "/home/dev/src/app")
			if m == nil || len(m.UIDMappings) != 1 || m.UIDMappings[0] != (specs.LinuxIDMapping{ContainerID: 0, HostID: DefaultSandboxID, Size: 1}) || len(m.GIDMappings) != 1 {
				t.Fatalf("project bind %+v, want it id-mapped disk 0 -> %d", m, DefaultSandboxID)
			}
			if m := mountAt(s, "/usr"); m == nil || len(m.UIDMappings) != 0 {
				t.Errorf("/usr id-mapped: %+v", m)
			}
		}},
		{"root caller, root-owned $HOME shown: id-mapped read-only, so it can be read and masked", `[filesystem]
allow_read = ["$HOME"]`, func(in *Inputs) { in.HomeUID, in.HomeGID, in.HomeOwned = 0, 0, true }, func(t *testing.T, s *specs.Spec) {
			m := mountAt(s, "/home/dev")
			if m == nil || m.Type != "bind" || !contains(m.Options, "ro") || len(m.UIDMappings) != 1 ||
				m.UIDMappings[0] != (specs.LinuxIDMapping{ContainerID: 0, HostID: 1000, Size: 1}) ||
				len(m.GIDMappings) != 1 || m.GIDMappings[0] != (specs.LinuxIDMapping{ContainerID: 0, HostID: 1000, Size: 1}) {
				t.Fatalf("$HOME bind %+v, want read-only and id-mapped disk 0 -> 1000", m)
			}
			if m := mountAt(s, "/home/dev/.ssh"); m == nil || m.Type != "tmpfs" {
				t.Errorf("$HOME/.ssh not masked: %+v", m)
			}
			if m := mountAt(s, "/home/dev/src/app"); m == nil || len(m.UIDMappings) != 0 {
				t.Errorf("the project, owned by the sandbox's root, took $HOME's mapping: %+v", m)
			}
		}},
		{"root caller, one read-only file of a root-owned $HOME: id-mapped too", `[filesystem]
allow_read = ["$HOME/.gitconfig"]`, func(in *Inputs) { in.HomeUID, in.HomeGID, in.HomeOwned = 0, 0, true }, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/home/dev/.gitconfig"); m == nil || len(m.UIDMappings) != 1 || m.UIDMappings[0].ContainerID != 0 || m.UIDMappings[0].HostID != 1000 {
				t.Fatalf("$HOME/.gitconfig bind %+v, want it id-mapped disk 0 -> 1000", m)
			}
		}},
		{"root caller, $HOME owned by the sandbox's root: no mapping", `[filesystem]
allow_read = ["$HOME"]`, func(in *Inputs) { in.HomeUID, in.HomeGID, in.HomeOwned = 1000, 1000, true }, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/home/dev"); m == nil || len(m.UIDMappings)+len(m.GIDMappings) != 0 {
				t.Fatalf("$HOME bind %+v, want it not id-mapped", m)
			}
		}},
		{"caller not root: $HOME is never id-mapped", `[filesystem]
allow_read = ["$HOME"]`, func(in *Inputs) { in.UID, in.GID, in.HomeUID, in.HomeGID, in.HomeOwned = 1000, 1000, 0, 0, true }, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/home/dev"); m == nil || len(m.UIDMappings)+len(m.GIDMappings) != 0 {
				t.Fatalf("$HOME bind %+v, want it not id-mapped", m)
			}
		}},
		{"root caller, a writable bind in a root-owned $HOME is not id-mapped (no writing as root on disk)", `[filesystem]
allow_write = ["$HOME/.config"]`, func(in *Inputs) { in.HomeUID, in.HomeGID, in.HomeOwned = 0, 0, true }, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/home/dev/.config"); m == nil || !contains(m.Options, "rw") || len(m.UIDMappings)+len(m.GIDMappings) != 0 {
				t.Fatalf("$HOME/.config bind %+v, want writable and not id-mapped", m)
			}
		}},
		{"project owned by root's group only: gid 0 is never mapped", ``, func(in *Inputs) { in.ProjectUID, in.ProjectGID = 1000, 0 }, func(t *testing.T, s *specs.Spec) {
			if g := s.Linux.GIDMappings; len(g) != 1 || g[0].HostID == 0 {
				t.Fatalf("gid mapping %+v", g)
			}
		}},
		{"noNewPrivileges, seccomp, read-only root", ``, nil, func(t *testing.T, s *specs.Spec) {
			if !s.Process.NoNewPrivileges || s.Linux.Seccomp == nil || !s.Root.Readonly {
				t.Fatal("missing noNewPrivileges, seccomp or read-only root")
			}
		}},
		{"default caps lack NET_RAW, MKNOD, AUDIT_WRITE, SETFCAP, FSETID (12.2)", ``, nil, func(t *testing.T, s *specs.Spec) {
			c := s.Process.Capabilities
			for _, bad := range []string{"CAP_NET_RAW", "CAP_MKNOD", "CAP_AUDIT_WRITE", "CAP_SYS_ADMIN", "CAP_SETFCAP", "CAP_FSETID"} {
				if contains(c.Bounding, bad) || contains(c.Effective, bad) || contains(c.Permitted, bad) {
					t.Errorf("%s granted", bad)
				}
			}
			if len(c.Inheritable)+len(c.Ambient) > 0 {
				t.Errorf("inheritable/ambient caps %v %v", c.Inheritable, c.Ambient)
			}
		}},
		{"strict: no capabilities at all", `extends = "strict"`, nil, func(t *testing.T, s *specs.Spec) {
			c := s.Process.Capabilities
			if len(c.Bounding)+len(c.Effective)+len(c.Permitted) != 0 {
				t.Fatalf("caps at strict: %+v", c)
			}
		}},
		{"limits", `[limits]
memory = "1GiB"
pids = 10
cpu = 0.5`, nil, func(t *testing.T, s *specs.Spec) {
			r := s.Linux.Resources
			if *r.Memory.Limit != 1<<30 || *r.Pids.Limit != 10 || *r.CPU.Quota != 50000 || *r.CPU.Period != 100000 {
				t.Fatalf("resources %+v", r)
			}
		}},
		{"env: only allowed names, secrets dropped", `[environment]
pass_through = ["GOFLAGS", "FOO_TOKEN", "AWS_*"]`, nil, func(t *testing.T, s *specs.Spec) {
			got := strings.Join(s.Process.Env, " ")
			want := "GOFLAGS=-mod=mod HOME=/home/dev LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin TERM=xterm-256color"
			if got != want {
				t.Fatalf("env %q, want %q", got, want)
			}
		}},
		{"no args: an interactive sh", ``, func(in *Inputs) { in.Args = nil }, func(t *testing.T, s *specs.Spec) {
			if !s.Process.Terminal || strings.Join(s.Process.Args, " ") != "sh" {
				t.Fatalf("terminal %v args %v", s.Process.Terminal, s.Process.Args)
			}
		}},
		{"a project under /tmp is bound after the fresh /tmp", ``, func(in *Inputs) {
			in.Project = "/tmp/cache"
			in.Found = nil
		}, func(t *testing.T, s *specs.Spec) {
			tmp, proj := -1, -1
			for i, m := range s.Mounts {
				switch m.Destination {
				case "/tmp":
					tmp = i
				case "/tmp/cache":
					proj = i
				}
			}
			if tmp < 0 || proj < tmp {
				t.Fatalf("/tmp at %d, project at %d", tmp, proj)
			}
		}},
		{"allow_write $TMP replaces the fresh /tmp", `[filesystem]
allow_write = ["$TMP"]`, nil, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/tmp"); m == nil || m.Type != "bind" || !contains(m.Options, "rw") {
				t.Fatalf("/tmp %+v", m)
			}
		}},
		{"deny under /proc goes to maskedPaths", `[filesystem]
deny = ["/proc/self/mountinfo"]`, nil, func(t *testing.T, s *specs.Spec) {
			if !contains(s.Linux.MaskedPaths, "/proc/self/mountinfo") {
				t.Fatalf("maskedPaths %v", s.Linux.MaskedPaths)
			}
		}},
		{"repository metadata read-only, the git dir pinned (12.3)", ``, nil, func(t *testing.T, s *specs.Spec) {
			pin := mountAt(s, "/home/dev/src/app/.git")
			if pin == nil || !contains(pin.Options, "rw") || pin.Source != "/home/dev/src/app/.git" {
				t.Fatalf(".git pin %+v", pin)
			}
			for _, p := range []string{"/home/dev/src/app/.git/hooks", "/home/dev/src/app/.vscode"} {
				if m := mountAt(s, p); m == nil || !contains(m.Options, "ro") || m.Source != p {
					t.Errorf("%s: %+v, want a read-only bind of itself", p, m)
				}
			}
			var protect []string
			if err := json.Unmarshal([]byte(s.Annotations[AnnotationProtect]), &protect); err != nil || !contains(protect, "/home/dev/src/app/.git/hooks") {
				t.Errorf("protect annotation %q (%v)", s.Annotations[AnnotationProtect], err)
			}
		}},
		{"a git config with a token is served stripped (12.7)", ``, nil, func(t *testing.T, s *specs.Spec) {
			m := mountAt(s, "/home/dev/src/app/.git/config")
			if m == nil || m.Source != "vetto/git-config-0" || !contains(m.Options, "ro") {
				t.Fatalf(".git/config mount %+v, want the bundle's stripped copy", m)
			}
			if !strings.Contains(s.Annotations[AnnotationStripped], `"path":"/home/dev/src/app/.git/config"`) {
				t.Errorf("stripped annotation %q", s.Annotations[AnnotationStripped])
			}
		}},
		{"allow_write names a protected path: it stays writable (opt-in)", `[filesystem]
allow_write = ["$PROJECT/.vscode"]`, nil, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/home/dev/src/app/.vscode"); m != nil && contains(m.Options, "ro") {
				t.Fatalf(".vscode still read-only: %+v", m)
			}
		}},
		{"sockets found are masked (12.6)", ``, nil, func(t *testing.T, s *specs.Spec) {
			if m := mountAt(s, "/home/dev/src/app/agent.sock"); m == nil || m.Source != "/dev/null" {
				t.Fatalf("socket mount %+v, want a /dev/null mask", m)
			}
		}},
		{"masks come after every bind (12.5)", ``, nil, func(t *testing.T, s *specs.Spec) {
			lastBind := -1
			for i, m := range s.Mounts {
				if m.Type == "bind" && m.Source != "/dev/null" {
					lastBind = i
				}
			}
			for i, m := range s.Mounts {
				if m.Source == "/dev/null" && i < lastBind {
					t.Fatalf("mask %s at %d before a bind at %d", m.Destination, i, lastBind)
				}
			}
		}},
		{"scan and deny annotations for create's re-check (12.4)", ``, nil, func(t *testing.T, s *specs.Spec) {
			var scan, deny []string
			_ = json.Unmarshal([]byte(s.Annotations[AnnotationScan]), &scan)
			_ = json.Unmarshal([]byte(s.Annotations[AnnotationDeny]), &deny)
			if !contains(scan, "/home/dev/src/app") || contains(scan, "/usr") {
				t.Errorf("scan %v", scan)
			}
			if !contains(deny, "/home/dev/.ssh") || !contains(deny, "/home/dev/src/app/.env") {
				t.Errorf("deny %v", deny)
			}
		}},
		{"annotations", `[network]
mode = "allowlist"
allow = ["example.com"]`, nil, func(t *testing.T, s *specs.Spec) {
			a := s.Annotations
			if a[AnnotationLevel] != "standard" || a[AnnotationNet] != "allowlist" || a[AnnotationNetAllow] != `["example.com"]` || a[AnnotationProfile] != "default" {
				t.Fatalf("annotations %v", a)
			}
			var ll landlockSpec
			if err := json.Unmarshal([]byte(a[AnnotationLandlock]), &ll); err != nil {
				t.Fatalf("landlock annotation: %v", err)
			}
			if ll.Ruleset.HandledAccessFS != llHandled || len(ll.Rules.PathBeneath) == 0 {
				t.Fatalf("landlock %+v", ll)
			}
			for _, r := range ll.Rules.PathBeneath {
				if contains(r.Paths, "/home/dev/src/app") && r.AllowedAccess != llWrite {
					t.Errorf("project access %d, want %d", r.AllowedAccess, llWrite)
				}
				if contains(r.Paths, "/usr") && r.AllowedAccess != llRead {
					t.Errorf("/usr access %d, want %d", r.AllowedAccess, llRead)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInputs()
			if tt.edit != nil {
				tt.edit(&in)
			}
			s, err := Compile(mustParse(t, tt.policy), in)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			tt.check(t, s)
		})
	}
}

func hasNamespace(s *specs.Spec, t specs.LinuxNamespaceType) bool {
	for _, ns := range s.Linux.Namespaces {
		if ns.Type == t && ns.Path == "" {
			return true
		}
	}
	return false
}

// Errors only a host can show (symlinks, denies of the profile) still
// name the file, line and key.
func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, policy string
		edit         func(*Inputs)
		kind         error
		want         string
	}{
		{"symlink out of the project", `[filesystem]
allow_read = ["$PROJECT/etc-link"]`, nil, ErrPathEscapes, `p.toml:2: filesystem.allow_read[0]: path escapes its root: "$PROJECT/etc-link" resolves through a symlink to /etc, outside /home/dev/src/app`},
		{"symlinked parent of a missing path", `[filesystem]
allow_write = ["$PROJECT/up/x"]`, nil, ErrPathEscapes, `p.toml:2: filesystem.allow_write[0]: path escapes its root`},
		{"symlink out of the project in a deny", `[filesystem]
deny = ["$PROJECT/etc-link"]`, nil, ErrPathEscapes, `p.toml:2: filesystem.deny[0]`},
		{"read a profile deny", `[filesystem]
allow_read = ["$HOME/.ssh"]`, nil, ErrRemovesDeny, `p.toml:2: filesystem.allow_read[0]: would remove a denied path: /home/dev/.ssh is inside $HOME/.ssh, which profile default denies`},
		{"write inside a profile deny", `[filesystem]
allow_write = [
  "$PROJECT/out",
  "$HOME/.aws/cli",
]`, nil, ErrRemovesDeny, `p.toml:4: filesystem.allow_write[1]`},
		{"allowed and denied by the policy itself", `[filesystem]
allow_read = ["/opt/tools"]
deny = ["/opt"]`, nil, ErrBadValue, `p.toml:2: filesystem.allow_read[0]: invalid value: /opt/tools is inside /opt, which p.toml:3: filesystem.deny[0] denies`},
		{"project inside a profile deny", ``, func(in *Inputs) { in.Project = "/home/dev/.ssh" }, ErrRemovesDeny, `p.toml: $PROJECT: would remove a denied path`},
		{"lower the profile's level", `extends = "strict"
[security]
level = "standard"`, nil, ErrBadValue, `p.toml:3: security.level: invalid value: "standard" is below profile strict's level "strict"`},
		{"degrade at strict", `[security]
level = "strict"
allow_degraded = ["landlock"]`, nil, ErrBadValue, `p.toml:3: security.allow_degraded[0]: invalid value: "landlock": level strict allows no degraded feature`},
		{"allow while the profile's network is off", `[network]
allow = ["example.com"]`, nil, ErrBadValue, `p.toml:2: network.allow[0]: invalid value: network mode is "off"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInputs()
			if tt.edit != nil {
				tt.edit(&in)
			}
			_, err := Compile(mustParse(t, tt.policy), in)
			if err == nil {
				t.Fatalf("Compile succeeded, want %v", tt.kind)
			}
			if !errors.Is(err, tt.kind) || !errors.Is(err, ErrPolicy) {
				t.Errorf("error %v is not %v and ErrPolicy", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
		})
	}
}

func TestCompileBadInputs(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Inputs)
	}{
		{"relative project", func(in *Inputs) { in.Project = "app" }},
		{"project /", func(in *Inputs) { in.Project = "/" }},
		{"unclean home", func(in *Inputs) { in.Home = "/home/dev/" }},
		{"relative rootfs", func(in *Inputs) { in.Rootfs = "rootfs" }},
		{"no lookup", func(in *Inputs) { in.Lookup = nil }},
		{"unknown arch", func(in *Inputs) { in.Arch = "mips" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInputs()
			tt.edit(&in)
			if _, err := Compile(mustParse(t, ""), in); err == nil || errors.Is(err, ErrPolicy) {
				t.Fatalf("error %v, want a non-policy error", err)
			}
		})
	}
}

func TestIsEnvFile(t *testing.T) {
	for name, want := range map[string]bool{
		".env": true, ".env.local": true, ".env.production": true,
		".env.example": false, ".env.sample": false, ".env.template": false, ".env.": false,
		"env": false, ".envrc": false, "x.env": false,
	} {
		if got := IsEnvFile(name); got != want {
			t.Errorf("IsEnvFile(%q) = %v, want %v", name, got, want)
		}
	}
}
