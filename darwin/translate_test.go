package darwin

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const (
	testSelf     = "/usr/local/bin/vetto-runtime"
	testStateDir = "/private/var/run/vetto-runtime/c1/backend"
	testUID      = 501
	testGID      = 20
)

func testInput(s *specs.Spec) Input {
	return Input{Spec: s, UID: testUID, GID: testGID, Self: testSelf, Fifo: testStateDir + "/" + fifoName}
}

func loadSpec(t *testing.T, name string) *specs.Spec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// golden is what a translation is compared on, apart from the profile
// (the .sb file beside it).
type golden struct {
	Params       []Param          `json:"params"`
	Args         []string         `json:"args"`
	Env          []string         `json:"env"`
	Cwd          string           `json:"cwd"`
	Rlimits      []Rlimit         `json:"rlimits,omitempty"`
	Umask        *uint32          `json:"umask,omitempty"`
	ReadRoots    []string         `json:"readRoots,omitempty"`
	WriteRoots   []string         `json:"writeRoots,omitempty"`
	Hidden       []string         `json:"hidden,omitempty"`
	Masked       []string         `json:"masked,omitempty"`
	Refusals     []Refusal        `json:"refusals,omitempty"`
	Degradations []Degradation    `json:"degradations,omitempty"`
	Notes        []Note           `json:"notes,omitempty"`
	Decision     string           `json:"decision"`
	Queries      []Query          `json:"queries"`
	Canaries     hooks.CanaryPlan `json:"canaries"`
}

func compareGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./darwin/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the translation (go test ./darwin/ -update rewrites it); got:\n%s", path, got)
	}
}

func TestTranslateGolden(t *testing.T) {
	tests := []struct {
		name    string
		refused bool
	}{
		{"default", true}, // limits and no-new-privs are not accepted at standard
		{"default-degraded", false},
		{"masks", false},
		{"readonly", false},
		{"network-host", true},
		{"hostile", false},
		{"linux-default", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := loadSpec(t, tt.name+".json")
			p := Translate(testInput(s))
			checkProfile(t, p.Profile, p)
			g := golden{Params: p.Params, Args: p.Args, Env: p.Env, Cwd: p.Cwd, Rlimits: p.Rlimits, Umask: p.Umask,
				ReadRoots: p.ReadRoots, WriteRoots: p.WriteRoots, Hidden: p.Hidden, Masked: p.Masked,
				Refusals: p.Refusals, Degradations: p.Degradations, Notes: p.Notes,
				Queries: p.Queries(testStateDir), Canaries: p.CanaryPlan()}
			level := bundleLevel(t, s)
			degraded, err := decide(p, s, level)
			if (err != nil) != tt.refused {
				t.Fatalf("decision at %s: %v, want refused=%v", level, err, tt.refused)
			}
			if err != nil && (!errors.Is(err, runtime.ErrDegradedRefused) || runtime.ExitCode(err) != runtime.ExitSandbox) {
				t.Fatalf("refused with %v, not ErrDegradedRefused (exit 125)", err)
			}
			g.Decision = decisionText(level, degraded, err)
			data, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, tt.name+".golden.json", append(data, '\n'))
			compareGolden(t, tt.name+".sb", []byte(p.Profile))
		})
	}
}

// The Linux compiler's default bundle asks for everything Seatbelt lacks;
// every refusal comes at once, not the first.
func TestTranslateRefusesAllAtOnce(t *testing.T) {
	p := Translate(testInput(loadSpec(t, "linux-default.json")))
	rules := map[string]bool{}
	for _, r := range p.Refusals {
		rules[r.Rule] = true
	}
	for _, want := range []string{"darwin.root", "darwin.mount-type", "darwin.mount-remap", "darwin.user", "darwin.capabilities",
		"darwin.namespaces", "darwin.seccomp", "darwin.landlock", "darwin.hostname"} {
		if !rules[want] {
			t.Errorf("refusals %v lack %s", p.Refusals, want)
		}
	}
}

// base is the smallest spec darwin accepts; each refusal test changes one
// thing of it.
func base() *specs.Spec {
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "/", Readonly: true},
		Process: &specs.Process{User: specs.User{UID: testUID, GID: testGID}, Args: []string{"true"}, Cwd: "/Users/dev/proj", Env: []string{"PATH=/usr/bin"}},
		Mounts: []specs.Mount{
			{Destination: "/usr", Type: "bind", Source: "/usr", Options: []string{"bind", "ro"}},
			{Destination: "/Users/dev/proj", Type: "bind", Source: "/Users/dev/proj", Options: []string{"bind", "rw"}},
		},
		Annotations: map[string]string{spec.AnnotationNet: "none"},
	}
}

func testBackend() *Backend {
	return &Backend{Self: testSelf, UID: testUID, GID: testGID}
}

func TestBaseAccepted(t *testing.T) {
	p := Translate(testInput(base()))
	if len(p.Refusals) > 0 {
		t.Fatalf("base refused: %v", p.Refusals)
	}
	degraded, err := decide(p, base(), runtime.LevelStandard)
	if err != nil {
		t.Fatal(err)
	}
	if len(degraded) != 1 || !strings.HasPrefix(degraded[0], FeatureCleanup+": ") {
		t.Fatalf("accepted = %v, want only cleanup", degraded)
	}
}

func ptr[T any](v T) *T { return &v }

// Every field Seatbelt cannot honour is refused by name: the error of
// Create carries the field and the rule, kind ErrDegradedRefused (125),
// before anything exists.
func TestCreateRefuses(t *testing.T) {
	linux := func(f func(*specs.Linux)) func(*specs.Spec) {
		return func(s *specs.Spec) {
			s.Linux = &specs.Linux{Namespaces: nil}
			f(s.Linux)
		}
	}
	tests := []struct {
		name, field, rule string
		mutate            func(*specs.Spec)
		req               func(*runtime.CreateRequest)
	}{
		{"image rootfs", "root.path", "darwin.root", func(s *specs.Spec) { s.Root.Path = "/bundle/rootfs" }, nil},
		{"bind remap", "mounts[2]", "darwin.mount-remap", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/bin", Type: "bind", Source: "/usr/bin", Options: []string{"bind", "ro"}})
		}, nil},
		{"procfs", "mounts[2]", "darwin.mount-type", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/proc", Type: "proc", Source: "proc"})
		}, nil},
		{"mount option", "mounts[1].options", "darwin.mount-option", func(s *specs.Spec) { s.Mounts[1].Options = append(s.Mounts[1].Options, "idmap") }, nil},
		{"host devices", "mounts[2]", "darwin.devices", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/dev", Type: "bind", Source: "/dev", Options: []string{"rbind"}})
		}, nil},
		{"NUL in path", "mounts[1].destination", "darwin.path", func(s *specs.Spec) { s.Mounts[1].Destination = "/Users/dev/a\x00b" }, nil},
		{"relative source", "mounts[1].source", "darwin.path", func(s *specs.Spec) { s.Mounts[1].Source = "proj" }, nil},
		{"terminal", "process.terminal", "darwin.terminal", func(s *specs.Spec) { s.Process.Terminal = true }, nil},
		{"other user", "process.user", "darwin.user", func(s *specs.Spec) { s.Process.User.UID = 1000 }, nil},
		{"additional gids", "process.user.additionalGids[0]", "darwin.user", func(s *specs.Spec) { s.Process.User.AdditionalGids = []uint32{80} }, nil},
		{"username", "process.user.username", "darwin.user", func(s *specs.Spec) { s.Process.User.Username = "dev" }, nil},
		{"capabilities", "process.capabilities", "darwin.capabilities", func(s *specs.Spec) {
			s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: []string{"CAP_CHOWN"}}
		}, nil},
		{"rlimit AS", "process.rlimits[0]", "darwin.rlimits", func(s *specs.Spec) {
			s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_AS", Soft: 1 << 30, Hard: 1 << 30}}
		}, nil},
		{"rlimit DATA", "process.rlimits[0]", "darwin.rlimits", func(s *specs.Spec) {
			s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_DATA", Soft: 1 << 30, Hard: 1 << 30}}
		}, nil},
		{"apparmor", "process.apparmorProfile", "darwin.process", func(s *specs.Spec) { s.Process.ApparmorProfile = "x" }, nil},
		{"oom score", "process.oomScoreAdj", "darwin.process", func(s *specs.Spec) { s.Process.OOMScoreAdj = ptr(100) }, nil},
		{"command line", "process.commandLine", "darwin.process", func(s *specs.Spec) { s.Process.CommandLine = "x" }, nil},
		{"hostname", "hostname", "darwin.hostname", func(s *specs.Spec) { s.Hostname = "sandbox" }, nil},
		{"namespace", "linux.namespaces[0]", "darwin.namespaces", linux(func(l *specs.Linux) {
			l.Namespaces = []specs.LinuxNamespace{{Type: specs.PIDNamespace}}
		}), nil},
		{"network namespace", "linux.namespaces[0]", "darwin.namespaces", linux(func(l *specs.Linux) {
			l.Namespaces = []specs.LinuxNamespace{{Type: specs.NetworkNamespace}}
		}), nil},
		{"uid mappings", "linux.uidMappings", "darwin.user", linux(func(l *specs.Linux) {
			l.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 501, Size: 1}}
		}), nil},
		{"sysctl", "linux.sysctl", "darwin.sysctl", linux(func(l *specs.Linux) { l.Sysctl = map[string]string{"net.ipv4.ip_forward": "1"} }), nil},
		{"seccomp", "linux.seccomp", "darwin.seccomp", linux(func(l *specs.Linux) { l.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActErrno} }), nil},
		{"devices", "linux.devices", "darwin.devices", linux(func(l *specs.Linux) { l.Devices = []specs.LinuxDevice{{Path: "/dev/fuse", Type: "c"}} }), nil},
		{"device allow", "linux.resources.devices[0]", "darwin.devices", linux(func(l *specs.Linux) {
			l.Resources = &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: true, Access: "rwm"}}}
		}), nil},
		{"cpu", "linux.resources.cpu", "darwin.resources", linux(func(l *specs.Linux) {
			l.Resources = &specs.LinuxResources{CPU: &specs.LinuxCPU{Shares: ptr(uint64(512))}}
		}), nil},
		{"swap", "linux.resources.memory", "darwin.resources", linux(func(l *specs.Linux) {
			l.Resources = &specs.LinuxResources{Memory: &specs.LinuxMemory{Swap: ptr(int64(1 << 30))}}
		}), nil},
		{"mount label", "linux.mountLabel", "darwin.linux", linux(func(l *specs.Linux) { l.MountLabel = "system_u" }), nil},
		{"personality", "linux.personality", "darwin.linux", linux(func(l *specs.Linux) { l.Personality = &specs.LinuxPersonality{Domain: "LINUX32"} }), nil},
		{"landlock", "annotations.dev.vetto.landlock", "darwin.landlock", func(s *specs.Spec) { s.Annotations[spec.AnnotationLandlock] = `{"ruleset":{}}` }, nil},
		{"strict", "annotations.dev.vetto.level", "darwin.level-strict", func(s *specs.Spec) { s.Annotations[spec.AnnotationLevel] = "strict" }, nil},
		{"masked not JSON", "annotations.dev.vetto.masked", "darwin.masked", func(s *specs.Spec) { s.Annotations[spec.AnnotationMasked] = "/etc/shadow" }, nil},
		{"network allowlist", "annotations.dev.vetto.net", "darwin.network", func(s *specs.Spec) { s.Annotations[spec.AnnotationNet] = "allowlist" }, nil},
		{"network host", "annotations.dev.vetto.net", "darwin.network", func(s *specs.Spec) { s.Annotations[spec.AnnotationNet] = "host" }, nil},
		{"network allow list", "annotations.dev.vetto.net.allow", "darwin.network", func(s *specs.Spec) { s.Annotations[spec.AnnotationNetAllow] = "example.org" }, nil},
		{"host network by omission", "linux.namespaces", "darwin.network-host", func(s *specs.Spec) {
			delete(s.Annotations, spec.AnnotationNet)
			s.Linux = &specs.Linux{}
		}, nil},
		{"windows section", "windows", "darwin.platform", func(s *specs.Spec) { s.Windows = &specs.Windows{} }, nil},
		{"prestart hook", "hooks.prestart[0]", "darwin.hooks", func(s *specs.Spec) {
			//lint:ignore SA1019 the deprecated hook is what is refused
			s.Hooks = &specs.Hooks{Prestart: []specs.Hook{{Path: "/usr/bin/true"}}}
		}, nil},
		{"bundle poststart hook", "hooks.poststart[1]", "darwin.hooks", func(s *specs.Spec) {
			s.Hooks = spec.WithRuntimeHooks(&specs.Hooks{Poststart: []specs.Hook{{Path: "/usr/bin/logger"}}}, testSelf)
		}, nil},
		{"guard depth", "mounts", "darwin.guard-depth", func(s *specs.Spec) {
			s.Annotations[spec.AnnotationMasked] = `["/Users/dev/proj/1/2/3/4/5/6/7/8/9/secret"]`
		}, nil},
		{"landlock request", "landlock", "darwin.landlock", nil, func(r *runtime.CreateRequest) { r.Landlock = "{}" }},
		{"console socket", "--console-socket", "darwin.terminal", nil, func(r *runtime.CreateRequest) { r.ConsoleSocket = "/tmp/sock" }},
		{"systemd cgroup", "--systemd-cgroup", "darwin.cgroups", nil, func(r *runtime.CreateRequest) { r.SystemdCgroup = true }},
		{"pidfd socket", "--pidfd-socket", "darwin.pidfd", nil, func(r *runtime.CreateRequest) { r.PidfdSocket = "/tmp/sock" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			if tt.mutate != nil {
				tt.mutate(s)
			}
			req := &runtime.CreateRequest{ID: "c1", Dir: t.TempDir() + "/backend", Spec: s}
			if tt.req != nil {
				tt.req(req)
			}
			c, fg, err := testBackend().Create(req)
			if err == nil || c != nil || fg != nil {
				t.Fatalf("Create = %v, %v, %v; want a refusal", c, fg, err)
			}
			if !errors.Is(err, runtime.ErrDegradedRefused) || runtime.ExitCode(err) != runtime.ExitSandbox {
				t.Fatalf("error %v: want ErrDegradedRefused, exit 125 (got %d)", err, runtime.ExitCode(err))
			}
			if want := tt.field + " (" + tt.rule + ")"; !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not name %q", err, want)
			}
			if _, statErr := os.Stat(req.Dir); !errors.Is(statErr, os.ErrNotExist) {
				t.Fatalf("a refused create left %s behind", req.Dir)
			}
		})
	}
}

// Degradations: strict accepts none, standard only cleanup
// (docs/platforms.md) and what dev.vetto.allow-degraded names, degraded all of them.
func TestDecideDegradations(t *testing.T) {
	withLimits := func() *specs.Spec {
		s := base()
		s.Linux = &specs.Linux{Namespaces: nil, Resources: &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: ptr(int64(64))}}}
		return s
	}
	nnp := func() *specs.Spec { s := base(); s.Process.NoNewPrivileges = true; return s }
	tests := []struct {
		name     string
		spec     *specs.Spec
		level    runtime.Level
		allow    []runtime.Feature
		accepted []string
		refused  []string
	}{
		{"cleanup at standard", base(), runtime.LevelStandard, nil, []string{FeatureCleanup}, nil},
		{"cleanup at strict", base(), runtime.LevelStrict, nil, nil, []string{"(darwin.degraded-cleanup)", "strict.no-degradation"}},
		{"limits at standard", withLimits(), runtime.LevelStandard, nil, nil, []string{"(darwin.limits)", "--allow-degraded=limits"}},
		{"limits allowed", withLimits(), runtime.LevelStandard, []runtime.Feature{runtime.FeatureLimits}, []string{FeatureLimits, FeatureCleanup}, nil},
		{"limits at degraded", withLimits(), runtime.LevelDegraded, nil, []string{FeatureLimits, FeatureCleanup}, nil},
		{"no-new-privs at standard", nnp(), runtime.LevelStandard, nil, nil, []string{"(darwin.no-new-privs)"}},
		{"no-new-privs allowed", nnp(), runtime.LevelStandard, []runtime.Feature{runtime.FeatureNoNewPrivs}, []string{FeatureCleanup, FeatureNoNewPrivs}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			degraded, err := decide(Translate(testInput(tt.spec)), tt.spec, tt.level, tt.allow...)
			if len(tt.refused) > 0 {
				if !errors.Is(err, runtime.ErrDegradedRefused) || runtime.ExitCode(err) != runtime.ExitSandbox {
					t.Fatalf("decision %v, want ErrDegradedRefused (125)", err)
				}
				for _, w := range tt.refused {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("refusal %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range degraded {
				f, _, _ := strings.Cut(d, ": ")
				got = append(got, f)
			}
			slices.Sort(got)
			want := slices.Clone(tt.accepted)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("accepted %v, want %v", got, want)
			}
		})
	}
}

// hostilePart is a path component built to break a profile that
// interpolated it: a quote, parentheses, a newline, SBPL of its own, and
// non-ASCII.
const hostilePart = "we\"ird (dir)\n\")(allow default)/проект ü"

func replaceAll(s *specs.Spec, from, to string) *specs.Spec {
	r := func(v string) string { return strings.ReplaceAll(v, from, to) }
	s.Process.Cwd = r(s.Process.Cwd)
	for i := range s.Mounts {
		s.Mounts[i].Source, s.Mounts[i].Destination = r(s.Mounts[i].Source), r(s.Mounts[i].Destination)
	}
	if a, ok := s.Annotations[spec.AnnotationMasked]; ok {
		var list []string
		_ = json.Unmarshal([]byte(a), &list)
		for i := range list {
			list[i] = r(list[i])
		}
		b, _ := json.Marshal(list)
		s.Annotations[spec.AnnotationMasked] = string(b)
	}
	return s
}

// The profile depends on the spec's shape, never on its paths: a hostile
// path and a plain one give the same text, and the hostile one reaches
// sandbox-exec intact, as one -D argument.
func TestProfileIndependentOfPaths(t *testing.T) {
	hostile := Translate(testInput(loadSpec(t, "hostile.json")))
	plain := Translate(testInput(replaceAll(loadSpec(t, "hostile.json"), hostilePart, "plain")))
	if hostile.Profile != plain.Profile {
		t.Fatalf("the profile changed with the path:\n%s\nvs\n%s", hostile.Profile, plain.Profile)
	}
	if strings.Contains(hostile.Profile, "проект") || strings.Contains(hostile.Profile, "allow default") {
		t.Fatalf("a path reached the profile text:\n%s", hostile.Profile)
	}
	if len(hostile.Params) != len(plain.Params) {
		t.Fatalf("params %d vs %d", len(hostile.Params), len(plain.Params))
	}
	seen := 0
	for i, p := range hostile.Params {
		if want := strings.ReplaceAll(plain.Params[i].Value, "plain", hostilePart); p.Value != want {
			t.Errorf("param %s = %q, want %q", p.Name, p.Value, want)
		}
		if strings.Contains(p.Value, hostilePart) {
			seen++
		}
	}
	if seen < 4 {
		t.Fatalf("only %d params carry the hostile path", seen)
	}
	// sandbox-exec splits -D at the first "=": the value comes back whole.
	args := hostile.SandboxArgs()
	if args[0] != "-p" || args[1] != hostile.Profile || args[len(args)-1] != "--" {
		t.Fatalf("SandboxArgs framing: %q … %q", args[:2], args[len(args)-1])
	}
	for i, p := range hostile.Params {
		if args[2+2*i] != "-D" {
			t.Fatalf("arg %d = %q, want -D", 2+2*i, args[2+2*i])
		}
		name, value, _ := strings.Cut(args[3+2*i], "=")
		if name != p.Name || value != p.Value {
			t.Fatalf("-D %q does not round-trip to %s=%q", args[3+2*i], p.Name, p.Value)
		}
	}
}

// What the profile allows, read by the tests' own parser and evaluator:
// the default bundle grants the system read-only, the project read-write,
// hides /tmp and $HOME, and denies every mask even inside the project.
func TestProfileSemantics(t *testing.T) {
	type access struct {
		op, path string
		want     bool
	}
	tests := []struct {
		file   string
		checks []access
	}{
		{"default-degraded.json", []access{
			{"file-read-data", "/usr/bin/make", true},
			{"process-exec", "/usr/bin/make", true},
			{"file-write-create", "/usr/bin/x", false},
			{"file-write-data", "/etc/hosts", false},
			{"file-read-data", "/etc/master.passwd", false},
			{"file-read-data", "/etc/sudoers", false},
			{"file-read-data", "/Users/dev/src/app/main.go", true},
			{"file-write-create", "/Users/dev/src/app/out.o", true},
			{"file-read-data", "/Users/dev/src/app/.env", false},
			{"file-write-unlink", "/Users/dev/src/app/.env", false},
			{"file-read-data", "/Users/dev/src/app/sub/.env.local", false},
			// A writable ancestor of a mask cannot be renamed away from it.
			{"file-write-unlink", "/Users/dev/src/app/sub", false},
			{"file-write-create", "/Users/dev/src/app/sub/new.go", true},
			{"file-read-data", "/Users/dev/.ssh/id_ed25519", false},
			{"file-read-data", "/tmp/x", false},
			{"file-write-create", "/tmp/x", false},
			{"file-read-data", "/private/var/run/vetto-runtime/c1/backend/state.json", false},
			{"file-write-data", "/private/var/run/vetto-runtime/c1/backend/start.fifo", true},
			{"file-write-create", "/private/var/run/vetto-runtime/c1/backend/x", false},
			{"file-write-setugid", "/Users/dev/src/app/a.out", false},
			{"file-read-data", "/dev/null", true},
			{"file-read-data", "/dev/disk0", false},
			{"file-read-metadata", "/", true},
			{"file-read-data", "/", false},
			{"network-outbound", "", false},
		}},
		{"readonly.json", []access{
			{"file-write-create", "/Users/dev/proj/src/a.c", true},
			{"file-write-data", "/Users/dev/proj/.git/config", false},
			{"file-write-unlink", "/Users/dev/proj/.git", false},
			{"file-read-data", "/Users/dev/proj/.git/config", true},
			{"process-exec", "/Users/dev/proj/build.sh", true},
			{"process-exec", "/Users/dev/proj/data/run.sh", false},
			{"file-write-create", "/Users/dev/proj/data/out.csv", true},
			{"file-read-data", "/Users/dev/proj/node_modules/x/index.js", false},
			{"file-write-data", "/Users/dev/proj/vendor/lib.go", false},
			{"file-write-data", "/Users/dev/proj/.github/workflows/ci.yml", false},
			{"file-write-unlink", "/Users/dev/proj/.github", false},
			{"file-write-create", "/Users/dev/proj/.github/new", true},
			{"file-write-create", "/x", false},
		}},
		{"masks.json", []access{
			{"file-read-data", "/Users/dev/proj/a/b/c/key.pem", false},
			{"file-write-unlink", "/Users/dev/proj/a", false},
			{"file-write-unlink", "/Users/dev/proj/a/b", false},
			{"file-write-unlink", "/Users/dev/proj/a/b/c", false},
			{"file-write-create", "/Users/dev/proj/a/b/c/other", true},
			{"file-read-data", "/Users/dev/proj/secrets/token", false},
			{"file-read-data", "/Users/dev/proj/config/credentials.json", false},
			{"file-read-data", "/Users/dev/proj/config/app.yaml", true},
			{"file-write-unlink", "/Users/dev/proj/config", false},
			{"file-read-data", "/Users/dev/proj/.env", false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p := Translate(testInput(loadSpec(t, tt.file)))
			rules := checkProfile(t, p.Profile, p)
			for _, a := range tt.checks {
				if got := sbplAllows(rules, p, a.op, a.path); got != a.want {
					t.Errorf("%s %s: allowed=%v, want %v", a.op, a.path, got, a.want)
				}
				// The translator's evaluator (used for guards) agrees.
				values := map[string]string{}
				for _, pa := range p.Params {
					values[pa.Name] = pa.Value
				}
				if got := evaluate(p.rules, values, a.op, a.path); got != a.want {
					t.Errorf("evaluate %s %s = %v, want %v", a.op, a.path, got, a.want)
				}
			}
		})
	}
}

func TestResolved(t *testing.T) {
	p := Translate(testInput(loadSpec(t, "default-degraded.json")))
	r := p.Resolved(func(s string) string {
		if s == "/etc" || strings.HasPrefix(s, "/etc/") {
			return "/private" + s
		}
		return s
	})
	if r.Profile != p.Profile {
		t.Fatal("resolving changed the profile")
	}
	if !slices.Contains(r.ReadRoots, "/private/etc") || !slices.Contains(r.Masked, "/private/etc/sudoers") {
		t.Fatalf("resolved roots %v masks %v", r.ReadRoots, r.Masked)
	}
	if slices.Contains(p.ReadRoots, "/private/etc") || p.Params[0].Value == r.Params[0].Value && p.Params[0].Value != "/" {
		t.Fatal("Resolved changed the original plan")
	}
}
