package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
)

type nsID = hooks.NamespaceID

// fakeBackend records what the core asks of it; its containers' "init" is
// a pid the test chooses.
type fakeBackend struct {
	initPid    int
	createErr  error
	containers map[string]*fakeContainer
	destroyed  []string
	// teardownLeft are pids Teardown reports as surviving.
	teardownLeft []int
	// canary answers the canaries a container with Canary asks for at
	// start; proceeded records the verdicts Proceed was given.
	canary    func(canary.Config) (canary.Report, error)
	proceeded []bool
	// execs, when set, is called at the moment the container's program
	// would exec: Start without canaries, Proceed(true) with them.
	execs func()
	// fg, when set, is the foreground Create hands a foreground run.
	fg Foreground
	// spec is the spec the last Create was given.
	spec *specs.Spec
}

// fakeForeground is an init whose exit status is status.
type fakeForeground struct {
	status int
	closed bool
	// onWait, when set, runs as a foreground run begins to wait for its
	// process.
	onWait func()
	// exitsSoon says the process exits within a run's short wait
	// (ExitAwaiter).
	exitsSoon bool
}

func (f *fakeForeground) AwaitExit(time.Duration) bool { return f.exitsSoon }

func (f *fakeForeground) Wait() (int, error) {
	if f.onWait != nil {
		f.onWait()
	}
	return f.status, nil
}
func (f *fakeForeground) Close() { f.closed = true }

type fakeContainer struct {
	b      *fakeBackend
	id     string
	status Status
}

func (b *fakeBackend) Name() string { return "fake" }
func (b *fakeBackend) Create(req *CreateRequest) (Container, Foreground, error) {
	if b.createErr != nil {
		return nil, nil, b.createErr
	}
	if err := os.MkdirAll(req.Dir, 0o700); err != nil {
		return nil, nil, err
	}
	b.spec = req.Spec
	c := &fakeContainer{b: b, id: req.ID, status: StatusCreated}
	b.containers[req.ID] = c
	if req.Foreground {
		return c, b.fg, nil
	}
	return c, nil, nil
}
func (b *fakeBackend) Load(_, id string) (Container, error) {
	if c, ok := b.containers[id]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("%q: %w", id, ErrNotExist)
}
func (b *fakeBackend) ParseSignal(string) (syscall.Signal, error) { return syscall.SIGKILL, nil }
func (b *fakeBackend) ExampleSpec(bool) (*specs.Spec, error)      { return nil, nil }
func (b *fakeBackend) Features() (*features.Features, error)      { return nil, nil }
func (c *fakeContainer) ID() string                               { return c.id }
func (c *fakeContainer) Status() (Status, error)                  { return c.status, nil }
func (c *fakeContainer) InitPid() int                             { return c.b.initPid }
func (c *fakeContainer) OCIState() (*specs.State, error)          { return &specs.State{ID: c.id}, nil }
func (c *fakeContainer) CgroupPaths() map[string]string           { return map[string]string{"": "/fake"} }
func (c *fakeContainer) Signal(sig syscall.Signal, all bool) error {
	if sig == syscall.SIGKILL {
		c.status = StatusStopped
	}
	return nil
}
func (c *fakeContainer) Destroy() error {
	c.b.destroyed = append(c.b.destroyed, c.id)
	delete(c.b.containers, c.id)
	return nil
}

// fakeNamespaces says the init is in the namespaces the test gives it.
type fakeNamespaces struct{ same bool }

func (f fakeNamespaces) Of(pid int, t specs.LinuxNamespaceType) (nsID, error) {
	if f.same {
		return nsID{Dev: 4, Ino: 1}, nil
	}
	return nsID{Dev: 4, Ino: 2}, nil
}
func (fakeNamespaces) Host(specs.LinuxNamespaceType) (nsID, error)  { return nsID{Dev: 4, Ino: 1}, nil }
func (fakeNamespaces) Path(string) (nsID, error)                    { return nsID{Dev: 4, Ino: 1}, nil }
func (fakeNamespaces) Status(int) (hooks.ProcStatus, error)         { return hooks.ProcStatus{}, nil }
func (fakeNamespaces) IDMap(int, string) ([]hooks.IDMapping, error) { return nil, nil }
func (fakeNamespaces) InCgroup(string, int) (bool, error)           { return true, nil }
func (fakeNamespaces) CgroupFile(string, string) (string, error)    { return "", nil }
func (fakeNamespaces) CgroupHas(string, string) (bool, error)       { return true, nil }

func writeBundle(t *testing.T, edit func(*specs.Spec)) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "rootfs"},
		Process: &specs.Process{Args: []string{"sh"}, Cwd: "/"},
		Linux:   &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: "pid"}, {Type: "network"}, {Type: "mount"}}},
	}
	if edit != nil {
		edit(s)
	}
	data, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newTestRuntime(t *testing.T, b *fakeBackend, ns fakeNamespaces) *Runtime {
	t.Helper()
	r, err := New(filepath.Join(t.TempDir(), "root"), b, ns, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// If the live init shares a namespace with the host that the spec asked to
// be new, create must fail with exit 125 and leave nothing: no container,
// no state. Removing the pre-launch check makes this test fail.
func TestCreateRefusesInitInHostNamespace(t *testing.T) {
	b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
	r := newTestRuntime(t, b, fakeNamespaces{same: true})
	err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)})
	if !errors.Is(err, ErrPreLaunchFailed) || ExitCode(err) != ExitSandbox {
		t.Fatalf("Create = %v (exit %d), want ErrPreLaunchFailed, exit 125", err, ExitCode(err))
	}
	if len(b.destroyed) != 1 || b.destroyed[0] != "c1" {
		t.Errorf("destroyed %v, want [c1]", b.destroyed)
	}
	if ids, _ := r.Store.ids(); len(ids) != 0 {
		t.Errorf("state left after refused create: %v", ids)
	}
}

func TestCreateStartDelete(t *testing.T) {
	b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
	r := newTestRuntime(t, b, fakeNamespaces{})
	bundle := writeBundle(t, nil)
	if err := r.Create(CreateOptions{ID: "c1", Bundle: bundle}); err != nil {
		t.Fatal(err)
	}
	st, err := r.State("c1")
	if err != nil || st.Status != StatusCreated || st.Vetto.State != StateLaunchable {
		t.Fatalf("state after create: %+v, %v; want created/Launchable", st, err)
	}
	if err := r.Create(CreateOptions{ID: "c1", Bundle: bundle}); !errors.Is(err, ErrExist) {
		t.Fatalf("second create: %v, want ErrExist", err)
	}
	if err := r.Start("c1"); err != nil {
		t.Fatal(err)
	}
	if err := r.Start("c1"); !errors.Is(err, ErrWrongState) {
		t.Fatalf("second start: %v, want ErrWrongState", err)
	}
	if err := r.Delete("c1", false); !errors.Is(err, ErrWrongState) {
		t.Fatalf("delete running without force: %v, want ErrWrongState", err)
	}
	if err := r.Delete("c1", true); err != nil {
		t.Fatal(err)
	}
	if _, err := r.State("c1"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("state after delete: %v, want ErrNotExist", err)
	}
}

// A backend failure leaves no state directory behind.
func TestCreateBackendFailureLeavesNothing(t *testing.T) {
	b := &fakeBackend{createErr: errors.New("boom"), containers: map[string]*fakeContainer{}}
	r := newTestRuntime(t, b, fakeNamespaces{})
	if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}); err == nil {
		t.Fatal("create succeeded")
	}
	if ids, _ := r.Store.ids(); len(ids) != 0 {
		t.Fatalf("state left: %v", ids)
	}
}

func TestCreateBadInput(t *testing.T) {
	tests := []struct {
		name string
		opts func(bundle string) CreateOptions
		edit func(*specs.Spec)
		want error
	}{
		{"invalid id", func(b string) CreateOptions { return CreateOptions{ID: "../x", Bundle: b} }, nil, ErrInvalidID},
		{"missing bundle", func(b string) CreateOptions { return CreateOptions{ID: "c1", Bundle: b + "/nope"} }, nil, ErrInvalidInput},
		{"invalid spec", func(b string) CreateOptions { return CreateOptions{ID: "c1", Bundle: b} },
			func(s *specs.Spec) { s.Process.Args = nil }, ErrInvalidInput},
		{"missing rootfs", func(b string) CreateOptions { return CreateOptions{ID: "c1", Bundle: b} },
			func(s *specs.Spec) { s.Root.Path = "nope" }, ErrInvalidInput},
		{"terminal detached without socket", func(b string) CreateOptions { return CreateOptions{ID: "c1", Bundle: b} },
			func(s *specs.Spec) { s.Process.Terminal = true }, ErrInvalidInput},
		{"socket without terminal", func(b string) CreateOptions {
			return CreateOptions{ID: "c1", Bundle: b, ConsoleSocket: "/x.sock"}
		}, nil, ErrInvalidInput},
		{"negative preserve-fds", func(b string) CreateOptions { return CreateOptions{ID: "c1", Bundle: b, PreserveFDs: -1} }, nil, ErrInvalidInput},
		{"pid file dir missing", func(b string) CreateOptions {
			return CreateOptions{ID: "c1", Bundle: b, PidFile: b + "/no/such/dir/pid"}
		}, nil, ErrInvalidInput},
		{"pid file a directory", func(b string) CreateOptions {
			return CreateOptions{ID: "c1", Bundle: b, PidFile: b + "/rootfs"}
		}, nil, ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
			r := newTestRuntime(t, b, fakeNamespaces{})
			err := r.Create(tt.opts(writeBundle(t, tt.edit)))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Create = %v, want %v", err, tt.want)
			}
			if len(b.containers) != 0 {
				t.Errorf("backend has containers after bad input")
			}
			if ids, _ := r.Store.ids(); len(ids) != 0 {
				t.Errorf("state left: %v", ids)
			}
		})
	}
}

func (c *fakeContainer) Exec(*ExecRequest) (int, Foreground, error) {
	return 0, nil, errors.New("fake")
}
func (c *fakeContainer) Processes() ([]int, error)           { return nil, nil }
func (c *fakeContainer) Pause() error                        { return nil }
func (c *fakeContainer) Resume() error                       { return nil }
func (c *fakeContainer) Stats() (any, error)                 { return nil, nil }
func (c *fakeContainer) NotifyOOM() (<-chan struct{}, error) { return nil, nil }
func (c *fakeContainer) Update(*specs.LinuxResources) error  { return nil }

// Teardown is the fake's kill and destroy; teardownLeft makes it report
// processes that survived.
func (c *fakeContainer) Teardown() (*hooks.Receipt, error) {
	if len(c.b.teardownLeft) > 0 {
		return &hooks.Receipt{Method: "cgroup.kill", Killed: 1, Remaining: c.b.teardownLeft}, nil
	}
	c.status = StatusStopped
	if err := c.Destroy(); err != nil {
		return nil, err
	}
	return &hooks.Receipt{Method: "cgroup.kill", Killed: 1, CgroupRemoved: true}, nil
}

// Start lets the fake run; with canaries it answers with the backend's
// canary func.
func (c *fakeContainer) Start(_ *specs.Spec, ask *canary.Config) (*canary.Report, error) {
	c.status = StatusRunning
	if ask == nil {
		if c.b.execs != nil {
			c.b.execs()
		}
		return nil, nil
	}
	if c.b.canary == nil {
		return nil, errors.New("fake: no canary answer")
	}
	rep, err := c.b.canary(*ask)
	if err != nil {
		return nil, err
	}
	return &rep, nil
}

// Proceed records the verdict; an abort stops the fake.
func (c *fakeContainer) Proceed(exec bool) error {
	c.b.proceeded = append(c.b.proceeded, exec)
	if exec && c.b.execs != nil {
		c.b.execs()
	}
	if !exec {
		c.status = StatusStopped
	}
	return nil
}
