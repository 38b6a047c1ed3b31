package darwin

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"

	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// HoldArg is the argument with which sandbox-exec starts the runtime
// itself inside the sandbox as the holder: it blocks on the start fifo,
// then execs the container's process. main dispatches it before the CLI.
const HoldArg = "darwin-hold"

// SelfTestArg runs the runtime inside the base profile for doctor: it
// checks from inside that it is sandboxed and cannot reach the network.
const SelfTestArg = "darwin-selftest"

// Files in the backend's state directory.
const (
	fifoName  = "start.fifo"
	stateName = "state.json"
)

// Backend is the macOS backend.
type Backend struct {
	// Self is the vetto-runtime executable: the holder and the probe.
	Self    string
	Version string
	// UID and GID are the caller's (the process runs as them).
	UID, GID uint32
	// Warnf reports what does not fail an operation. The degradations a
	// launch accepted are no longer said here: the core's launch line
	// carries them (Platform). nil says nothing.
	Warnf func(format string, args ...any)
}

var (
	_ runtime.Backend         = (*Backend)(nil)
	_ runtime.Doctor          = (*Backend)(nil)
	_ runtime.PlatformBackend = (*Backend)(nil)
)

// New is the backend for this process: its own executable and ids.
func New(version string, warnf func(string, ...any)) *Backend {
	self, _ := os.Executable()
	if self != "" {
		if r, err := filepath.EvalSymlinks(self); err == nil {
			self = r
		}
	}
	return &Backend{Self: self, Version: version, UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Warnf: warnf}
}

func (*Backend) Name() string { return "darwin" }

// Create translates the spec, refuses it with every reason at once if
// Seatbelt cannot express it (ErrDegradedRefused, exit 125), and otherwise
// starts the process confined and held until Start. Whether the plan's
// degradations are acceptable is the core's decision, made before (see
// Platform); its verdicts on the held process are the core's to judge
// (runtime.VerifyingContainer).
func (b *Backend) Create(req *runtime.CreateRequest) (runtime.Container, runtime.Foreground, error) {
	plan, err := b.Plan(req)
	if err != nil {
		return nil, nil, err
	}
	if err := plan.refused(); err != nil {
		return nil, nil, fmt.Errorf("create %q: %w", req.ID, err)
	}
	return b.launch(req, plan)
}

// Platform is req's translation as the launch evaluator reads it
// (runtime.PlatformBackend): what Create would refuse, and what it gives
// only in part.
func (b *Backend) Platform(req *runtime.CreateRequest) (*runtime.PlatformFacts, error) {
	plan, err := b.Plan(req)
	if err != nil {
		return nil, err
	}
	return plan.LaunchFacts(), nil
}

// Plan is the translation of req, before anything exists: the spec's own
// refusals and those of the request's options beyond it.
func (b *Backend) Plan(req *runtime.CreateRequest) (*Plan, error) {
	if req.Spec == nil {
		return nil, runtime.Errorf(runtime.ErrInvalidInput, "no spec")
	}
	if b.Self == "" {
		return nil, runtime.Errorf(runtime.ErrBackendUnavailable, "the darwin backend needs its own executable to hold the start inside the sandbox, and cannot find it")
	}
	plan := Translate(Input{Spec: req.Spec, UID: b.UID, GID: b.GID, Self: b.Self, Fifo: filepath.Join(req.Dir, fifoName)})
	// What the request asks beyond the spec.
	if req.Landlock != "" {
		plan.Refusals = append(plan.Refusals, Refusal{Field: "landlock", Rule: "darwin.landlock", Reason: "Landlock is Linux's"})
	}
	if req.ConsoleSocket != "" {
		plan.Refusals = append(plan.Refusals, Refusal{Field: "--console-socket", Rule: "darwin.terminal", Reason: "a pty is not implemented on darwin"})
	}
	if req.SystemdCgroup {
		plan.Refusals = append(plan.Refusals, Refusal{Field: "--systemd-cgroup", Rule: "darwin.cgroups", Reason: "darwin has no cgroups"})
	}
	if req.PidfdSocket != "" {
		plan.Refusals = append(plan.Refusals, Refusal{Field: "--pidfd-socket", Rule: "darwin.pidfd", Reason: "pidfds are Linux's"})
	}
	return plan, nil
}

// Load opens the container whose state is in dir.
func (b *Backend) Load(dir, id string) (runtime.Container, error) { return b.load(dir, id) }

// darwinSignals are darwin's signal numbers, which are not Linux's past 9.
var darwinSignals = map[string]syscall.Signal{
	"HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "IOT": 6, "EMT": 7, "FPE": 8, "KILL": 9,
	"BUS": 10, "SEGV": 11, "SYS": 12, "PIPE": 13, "ALRM": 14, "TERM": 15, "URG": 16, "STOP": 17, "TSTP": 18,
	"CONT": 19, "CHLD": 20, "TTIN": 21, "TTOU": 22, "IO": 23, "XCPU": 24, "XFSZ": 25, "VTALRM": 26,
	"PROF": 27, "WINCH": 28, "INFO": 29, "USR1": 30, "USR2": 31,
}

// ParseSignal reads "KILL", "SIGKILL" or a number, as darwin numbers them.
func (*Backend) ParseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 31 {
			return 0, fmt.Errorf("invalid signal number %d", n)
		}
		return syscall.Signal(n), nil
	}
	if sig, ok := darwinSignals[strings.TrimPrefix(strings.ToUpper(s), "SIG")]; ok {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q", s)
}

// ExampleSpec is a darwin bundle: host-root, the system read-only, no
// network, the caller's ids, and nothing the standard level would refuse
// (no nosuid, which Seatbelt cannot honour). rootless changes nothing: a
// darwin container is never root.
func (b *Backend) ExampleSpec(bool) (*specs.Spec, error) {
	ro := []string{"bind", "ro"}
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "/", Readonly: true},
		Process: &specs.Process{
			User: specs.User{UID: b.UID, GID: b.GID},
			Args: []string{"sh"},
			Env:  []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "TERM=xterm"},
			Cwd:  "/",
		},
		Mounts: []specs.Mount{
			{Destination: "/bin", Type: "bind", Source: "/bin", Options: ro},
			{Destination: "/usr", Type: "bind", Source: "/usr", Options: ro},
			{Destination: "/System", Type: "bind", Source: "/System", Options: ro},
			{Destination: "/private/etc", Type: "bind", Source: "/private/etc", Options: ro},
			{Destination: "/private/tmp", Type: "tmpfs", Source: "tmpfs"},
		},
		Annotations: map[string]string{spec.AnnotationNet: "none"},
	}, nil
}

// Features says what this backend accepts of a spec: no linux section
// features (every one is refused), vetto's own hooks, the bind options
// Seatbelt honours.
func (b *Backend) Features() (*features.Features, error) {
	opts := make([]string, 0, len(mountOptions))
	for o := range mountOptions {
		opts = append(opts, o)
	}
	slices.Sort(opts)
	return &features.Features{
		OCIVersionMin: "1.0.0",
		OCIVersionMax: specs.Version,
		Hooks:         []string{"poststart", "poststop"},
		MountOptions:  opts,
		Annotations: map[string]string{
			"dev.vetto.runtime.version": b.Version,
			"dev.vetto.runtime.backend": "seatbelt",
		},
	}, nil
}
