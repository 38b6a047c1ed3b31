package windows

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
	testSelf = `C:\Program Files\vetto\vetto-runtime.exe`
	testName = "vetto.c1.0123456789ab"
)

func testInput(s *specs.Spec) Input { return Input{Spec: s, Self: testSelf, Name: testName} }

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

type golden struct {
	Plan     *Plan            `json:"plan"`
	Decision string           `json:"decision"`
	Canaries hooks.CanaryPlan `json:"canaries"`
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
		t.Fatalf("%v (run go test ./windows/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the translation (go test ./windows/ -update rewrites it); got:\n%s", path, got)
	}
}

func TestTranslateGolden(t *testing.T) {
	tests := []struct {
		name    string
		refused bool
	}{
		{"default", false}, // the pids degradation is allowed by dev.vetto.allow-degraded
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
			g := golden{Plan: p, Canaries: p.CanaryPlan()}
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
		})
	}
}

// The job every plan gets: kill on close, die on unhandled exception,
// all eight UI restrictions, and never a breakaway flag.
func TestJobAlways(t *testing.T) {
	for _, f := range []string{"default.json", "masks.json", "readonly.json", "hostile.json"} {
		p := Translate(testInput(loadSpec(t, f)))
		j := p.Job
		if j.LimitFlags&limitKillOnJobClose == 0 || j.LimitFlags&limitDieOnUnhandledException == 0 {
			t.Errorf("%s: limit flags %#x lack kill-on-close or die-on-exception", f, j.LimitFlags)
		}
		if j.LimitFlags&(limitBreakawayOK|limitSilentBreakawayOK) != 0 {
			t.Errorf("%s: limit flags %#x allow breakaway", f, j.LimitFlags)
		}
		if j.UIRestrictions != uiAll || len(j.UI) != 8 {
			t.Errorf("%s: UI restrictions %#x %v", f, j.UIRestrictions, j.UI)
		}
		if !p.Token.DisableMaxPrivilege || p.Token.Integrity != sidLowIntegrity || !slices.Contains(p.Token.DenyOnly, sidAdministrators) {
			t.Errorf("%s: token %+v", f, p.Token)
		}
		if len(p.AppContainer.Capabilities) != 0 || p.AppContainer.Name != testName {
			t.Errorf("%s: AppContainer %+v", f, p.AppContainer)
		}
	}
}

func TestLimits(t *testing.T) {
	p := Translate(testInput(loadSpec(t, "default.json")))
	if p.Job.JobMemoryLimit != 4<<30 || p.Job.LimitFlags&limitJobMemory == 0 {
		t.Errorf("memory: %d flags %#x", p.Job.JobMemoryLimit, p.Job.LimitFlags)
	}
	if p.Job.ActiveProcessLimit != 1024 || p.Job.LimitFlags&limitActiveProcess == 0 {
		t.Errorf("pids: %d", p.Job.ActiveProcessLimit)
	}
	if len(p.Degradations) != 1 || p.Degradations[0].Rule != "windows.pids-threads" {
		t.Errorf("degradations %v, want the pids one", p.Degradations)
	}
	// memory+swap bounds the commit too: the smaller wins.
	s := base()
	s.Linux = &specs.Linux{Resources: &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: ptr(int64(2 << 30)), Swap: ptr(int64(1 << 30))}}}
	if got := Translate(testInput(s)).Job.JobMemoryLimit; got != 1<<30 {
		t.Errorf("memory with swap = %d, want %d", got, 1<<30)
	}
	// Without limits the job has no memory or process cap flag.
	if f := Translate(testInput(base())).Job.LimitFlags; f&(limitJobMemory|limitActiveProcess) != 0 {
		t.Errorf("flags %#x without limits", f)
	}
}

func TestGrants(t *testing.T) {
	p := Translate(testInput(loadSpec(t, "readonly.json")))
	want := []Grant{
		{Path: testSelf, Access: accessRead, From: "runtime"},
		{Path: `C:\work\proj`, Access: accessWrite, From: "mounts[0]"},
		{Path: `C:\work\proj\vendor`, Access: accessRead, From: "mounts[1]"},
		{Path: `C:\work\proj\vendor`, Access: accessDenyWrite, From: "mounts[1]"},
		{Path: `C:\work\proj\downloads`, Access: accessWrite, From: "mounts[2]"},
		{Path: `C:\work\proj\downloads`, Access: accessDenyExecute, From: "mounts[2]"},
		{Path: `C:\tools`, Access: accessRead, From: "mounts[3]"},
	}
	if !slices.Equal(p.Grants, want) {
		t.Fatalf("grants:\n%v\nwant:\n%v", p.Grants, want)
	}
	m := Translate(testInput(loadSpec(t, "masks.json")))
	for _, path := range []string{`C:\work\proj\.env`, `C:\work\proj\config\credentials.json`, `C:\work\proj\secrets`} {
		if !slices.Contains(m.Grants, Grant{Path: path, Access: accessDeny, From: "masks"}) {
			t.Errorf("no deny grant for %s in %v", path, m.Grants)
		}
	}
}

func base() *specs.Spec {
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: `C:\`},
		Process: &specs.Process{Args: []string{"cmd.exe"}, Cwd: `C:\work`, Env: []string{`PATH=C:\Windows\System32`}},
		Mounts: []specs.Mount{
			{Destination: `C:\work`, Type: "bind", Source: `C:\work`, Options: []string{"bind", "rw"}},
		},
		Annotations: map[string]string{spec.AnnotationNet: "none"},
	}
}

func ptr[T any](v T) *T { return &v }

func testBackend() *Backend { return &Backend{Self: testSelf} }

func TestBaseAccepted(t *testing.T) {
	p := Translate(testInput(base()))
	if len(p.Refusals)+len(p.Degradations) > 0 {
		t.Fatalf("base: refusals %v degradations %v", p.Refusals, p.Degradations)
	}
	if _, err := decide(p, base(), runtime.LevelStandard); err != nil {
		t.Fatal(err)
	}
}

// Every field the job, token and AppContainer cannot honour is refused
// by name: Create's error carries the field and the rule, kind
// ErrDegradedRefused (125), before anything exists.
func TestCreateRefuses(t *testing.T) {
	linux := func(f func(*specs.Linux)) func(*specs.Spec) {
		return func(s *specs.Spec) {
			s.Linux = &specs.Linux{}
			f(s.Linux)
		}
	}
	win := func(f func(*specs.Windows)) func(*specs.Spec) {
		return func(s *specs.Spec) {
			s.Windows = &specs.Windows{}
			f(s.Windows)
		}
	}
	tests := []struct {
		name, field, rule string
		mutate            func(*specs.Spec)
		req               func(*runtime.CreateRequest)
	}{
		{"image rootfs", "root.path", "windows.root", func(s *specs.Spec) { s.Root.Path = `C:\bundle\rootfs` }, nil},
		{"posix root", "root.path", "windows.root", func(s *specs.Spec) { s.Root.Path = "rootfs" }, nil},
		{"bind remap", "mounts[1]", "windows.mount-remap", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: `C:\tools`, Type: "bind", Source: `D:\tools`, Options: []string{"bind", "ro"}})
		}, nil},
		{"whole drive", "mounts[1]", "windows.mount-root", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: `D:\`, Type: "bind", Source: `D:\`, Options: []string{"bind", "ro"}})
		}, nil},
		{"procfs", "mounts[1]", "windows.mount-type", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: `C:\proc`, Type: "proc", Source: "proc"})
		}, nil},
		{"mount option", "mounts[0].options", "windows.mount-option", func(s *specs.Spec) { s.Mounts[0].Options = append(s.Mounts[0].Options, "nosuid") }, nil},
		{"UNC path", "mounts[0].destination", "windows.path", func(s *specs.Spec) { s.Mounts[0].Destination = `\\server\share` }, nil},
		{"posix path", "mounts[0].destination", "windows.path", func(s *specs.Spec) { s.Mounts[0].Destination = "/work" }, nil},
		{"posix cwd", "process.cwd", "windows.path", func(s *specs.Spec) { s.Process.Cwd = "/" }, nil},
		{"terminal", "process.terminal", "windows.terminal", func(s *specs.Spec) { s.Process.Terminal = true }, nil},
		{"quote in program", "process.args[0]", "windows.args", func(s *specs.Spec) { s.Process.Args = []string{`C:\a"b.exe`} }, nil},
		{"uid", "process.user", "windows.user", func(s *specs.Spec) { s.Process.User.UID = 1000 }, nil},
		{"umask", "process.user", "windows.user", func(s *specs.Spec) { s.Process.User.Umask = ptr(uint32(0o22)) }, nil},
		{"username", "process.user.username", "windows.user", func(s *specs.Spec) { s.Process.User.Username = `ContainerAdministrator` }, nil},
		{"capabilities", "process.capabilities", "windows.capabilities", func(s *specs.Spec) {
			s.Process.Capabilities = &specs.LinuxCapabilities{Effective: []string{"CAP_SYS_ADMIN"}}
		}, nil},
		{"rlimit", "process.rlimits[0]", "windows.rlimits", func(s *specs.Spec) {
			s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Soft: 1024, Hard: 1024}}
		}, nil},
		{"selinux", "process.selinuxLabel", "windows.process", func(s *specs.Spec) { s.Process.SelinuxLabel = "x" }, nil},
		{"hostname", "hostname", "windows.hostname", func(s *specs.Spec) { s.Hostname = "box" }, nil},
		{"namespace", "linux.namespaces[0]", "windows.namespaces", linux(func(l *specs.Linux) { l.Namespaces = []specs.LinuxNamespace{{Type: specs.MountNamespace}} }), nil},
		{"uid mappings", "linux.uidMappings", "windows.user", linux(func(l *specs.Linux) { l.UIDMappings = []specs.LinuxIDMapping{{Size: 1}} }), nil},
		{"sysctl", "linux.sysctl", "windows.sysctl", linux(func(l *specs.Linux) { l.Sysctl = map[string]string{"a": "b"} }), nil},
		{"seccomp", "linux.seccomp", "windows.seccomp", linux(func(l *specs.Linux) { l.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActErrno} }), nil},
		{"devices", "linux.devices", "windows.devices", linux(func(l *specs.Linux) { l.Devices = []specs.LinuxDevice{{Path: "/dev/kvm"}} }), nil},
		{"device allow", "linux.resources.devices[0]", "windows.devices", linux(func(l *specs.Linux) {
			l.Resources = &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: true}}}
		}), nil},
		{"cpu", "linux.resources.cpu", "windows.resources", linux(func(l *specs.Linux) {
			l.Resources = &specs.LinuxResources{CPU: &specs.LinuxCPU{Quota: ptr(int64(50000))}}
		}), nil},
		{"memory reservation", "linux.resources.memory", "windows.resources", linux(func(l *specs.Linux) {
			l.Resources = &specs.LinuxResources{Memory: &specs.LinuxMemory{Reservation: ptr(int64(1))}}
		}), nil},
		{"intel rdt", "linux.intelRdt", "windows.linux", linux(func(l *specs.Linux) { l.IntelRdt = &specs.LinuxIntelRdt{} }), nil},
		{"layers", "windows.layerFolders", "windows.layers", win(func(w *specs.Windows) { w.LayerFolders = []string{`C:\layers\1`} }), nil},
		{"hyperv", "windows.hyperv", "windows.windows-container", win(func(w *specs.Windows) { w.HyperV = &specs.WindowsHyperV{} }), nil},
		{"windows network", "windows.network", "windows.windows-container", win(func(w *specs.Windows) { w.Network = &specs.WindowsNetwork{} }), nil},
		{"windows cpu", "windows.resources.cpu", "windows.resources", win(func(w *specs.Windows) {
			w.Resources = &specs.WindowsResources{CPU: &specs.WindowsCPUResources{Count: ptr(uint64(2))}}
		}), nil},
		{"windows devices", "windows.devices", "windows.windows-container", win(func(w *specs.Windows) { w.Devices = []specs.WindowsDevice{{ID: "x"}} }), nil},
		{"landlock", "annotations.dev.vetto.landlock", "windows.landlock", func(s *specs.Spec) { s.Annotations[spec.AnnotationLandlock] = "{}" }, nil},
		{"strict", "annotations.dev.vetto.level", "windows.level-strict", func(s *specs.Spec) { s.Annotations[spec.AnnotationLevel] = "strict" }, nil},
		{"masked not JSON", "annotations.dev.vetto.masked", "windows.masked", func(s *specs.Spec) { s.Annotations[spec.AnnotationMasked] = `C:\secret` }, nil},
		{"network host", "annotations.dev.vetto.net", "windows.network", func(s *specs.Spec) { s.Annotations[spec.AnnotationNet] = "host" }, nil},
		{"network allowlist", "annotations.dev.vetto.net", "windows.network", func(s *specs.Spec) { s.Annotations[spec.AnnotationNet] = "allowlist" }, nil},
		{"net allow list", "annotations.dev.vetto.net.allow", "windows.network", func(s *specs.Spec) { s.Annotations[spec.AnnotationNetAllow] = "example.org" }, nil},
		{"host network by omission", "linux.namespaces", "windows.network-host", func(s *specs.Spec) {
			delete(s.Annotations, spec.AnnotationNet)
			s.Linux = &specs.Linux{}
		}, nil},
		{"prestart hook", "hooks.prestart[0]", "windows.hooks", func(s *specs.Spec) {
			//lint:ignore SA1019 the deprecated hook is what is refused
			s.Hooks = &specs.Hooks{Prestart: []specs.Hook{{Path: `C:\hook.exe`}}}
		}, nil},
		{"bundle poststop hook", "hooks.poststop[1]", "windows.hooks", func(s *specs.Spec) {
			s.Hooks = spec.WithRuntimeHooks(&specs.Hooks{Poststop: []specs.Hook{{Path: `C:\cleanup.exe`}}}, testSelf)
		}, nil},
		{"landlock request", "landlock", "windows.landlock", nil, func(r *runtime.CreateRequest) { r.Landlock = "{}" }},
		{"console socket", "--console-socket", "windows.terminal", nil, func(r *runtime.CreateRequest) { r.ConsoleSocket = "x" }},
		{"pidfd socket", "--pidfd-socket", "windows.pidfd", nil, func(r *runtime.CreateRequest) { r.PidfdSocket = "x" }},
		{"systemd cgroup", "--systemd-cgroup", "windows.cgroups", nil, func(r *runtime.CreateRequest) { r.SystemdCgroup = true }},
		{"preserve fds", "--preserve-fds", "windows.preserve-fds", nil, func(r *runtime.CreateRequest) { r.PreserveFDs = 2 }},
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

func TestTranslateRefusesAllAtOnce(t *testing.T) {
	p := Translate(testInput(loadSpec(t, "linux-default.json")))
	rules := map[string]bool{}
	for _, r := range p.Refusals {
		rules[r.Rule] = true
	}
	for _, want := range []string{"windows.root", "windows.path", "windows.capabilities", "windows.namespaces",
		"windows.seccomp", "windows.landlock", "windows.hostname"} {
		if !rules[want] {
			t.Errorf("refusals lack %s: %v", want, p.Refusals)
		}
	}
}

// The pids degradation: refused at standard without an opt-in, accepted
// with dev.vetto.allow-degraded=limits or at degraded.
func TestDecidePids(t *testing.T) {
	s := base()
	s.Linux = &specs.Linux{Namespaces: nil, Resources: &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: ptr(int64(64))}}}
	p := Translate(testInput(s))
	tests := []struct {
		name   string
		level  runtime.Level
		allow  []runtime.Feature
		refuse string
	}{
		{"standard without opt-in", runtime.LevelStandard, nil, "standard.degradation"},
		{"standard, accepted", runtime.LevelStandard, []runtime.Feature{runtime.FeatureLimits}, ""},
		{"degraded", runtime.LevelDegraded, nil, ""},
		{"strict, accepted", runtime.LevelStrict, []runtime.Feature{runtime.FeatureLimits}, "strict.no-degradation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			degraded, err := decide(p, s, tt.level, tt.allow...)
			if tt.refuse == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(degraded) != 1 || !strings.Contains(degraded[0], "windows.pids-threads") {
					t.Fatalf("degraded %v, want windows.pids-threads named", degraded)
				}
				return
			}
			if !errors.Is(err, runtime.ErrDegradedRefused) || !strings.Contains(err.Error(), tt.refuse) || !strings.Contains(err.Error(), "windows.pids-threads") {
				t.Fatalf("decision %v, want %s naming windows.pids-threads", err, tt.refuse)
			}
		})
	}
}

// Hostile arguments and paths reach the process and the grants intact:
// the command line parses back to the spec's argv, and a path is a value,
// never text to interpret.
func TestHostile(t *testing.T) {
	s := loadSpec(t, "hostile.json")
	p := Translate(testInput(s))
	if len(p.Refusals) > 0 {
		t.Fatalf("refused: %v", p.Refusals)
	}
	if got := parseCommandLine(p.CommandLine); !slices.Equal(got, s.Process.Args) {
		t.Fatalf("command line %s parses to %q, want %q", p.CommandLine, got, s.Process.Args)
	}
	if !slices.Contains(p.Grants, Grant{Path: `C:\Users\dev\проект (ü)\秘密 (key).txt`, Access: accessDeny, From: "masks"}) {
		t.Fatalf("grants %v lack the hostile mask", p.Grants)
	}
}
