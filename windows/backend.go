package windows

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"

	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// HolderArg is the hidden command with which the runtime starts itself as
// a container's holder: it owns the job (whose last handle closing kills
// everything in it), creates the process suspended inside it, and serves
// start, kill, state and teardown over a pipe only its user can open,
// between CLI invocations. main dispatches it before the CLI.
const HolderArg = "windows-holder"

// Files in the backend's state directory (used by the _windows.go files).
const (
	//lint:ignore U1000 used only where GOOS=windows
	planName = "plan.json"
	//lint:ignore U1000 used only where GOOS=windows
	stateName = "state.json"
)

// Backend is the Windows backend.
type Backend struct {
	// Self is the vetto-runtime executable: the holder and the probe.
	Self    string
	Version string
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

// New is the backend for this process.
func New(version string, warnf func(string, ...any)) *Backend {
	self, _ := os.Executable()
	return &Backend{Self: self, Version: version, Warnf: warnf}
}

func (*Backend) Name() string { return "windows" }

// Create translates the spec, refuses it with every reason at once if the
// job, token and AppContainer cannot express it (ErrDegradedRefused, exit
// 125), and otherwise has a holder create the process suspended inside
// its job. Whether the plan's degradations are acceptable is the core's
// decision, made before (see Platform); its verdicts on the suspended
// process are the core's to judge (runtime.VerifyingContainer).
func (b *Backend) Create(req *runtime.CreateRequest) (runtime.Container, runtime.Foreground, error) {
	plan, err := b.Plan(req, appContainerName(req.ID))
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
// only in part. The profile name is one for this question only: what is
// refused or degraded does not depend on it.
func (b *Backend) Platform(req *runtime.CreateRequest) (*runtime.PlatformFacts, error) {
	plan, err := b.Plan(req, appContainerName(req.ID))
	if err != nil {
		return nil, err
	}
	return plan.LaunchFacts(), nil
}

// Plan is the translation of req, before anything exists: the spec's own
// refusals and those of the request's options beyond it.
func (b *Backend) Plan(req *runtime.CreateRequest, name string) (*Plan, error) {
	if req.Spec == nil {
		return nil, runtime.Errorf(runtime.ErrInvalidInput, "no spec")
	}
	if b.Self == "" {
		return nil, runtime.Errorf(runtime.ErrBackendUnavailable, "the windows backend needs its own executable as the holder, and cannot find it")
	}
	plan := Translate(Input{Spec: req.Spec, Self: b.Self, Name: name})
	if req.Landlock != "" {
		plan.Refusals = append(plan.Refusals, Refusal{Field: "landlock", Rule: "windows.landlock", Reason: "Landlock is Linux's"})
	}
	if req.ConsoleSocket != "" {
		plan.Refusals = append(plan.Refusals, Refusal{Field: "--console-socket", Rule: "windows.terminal", Reason: "a pseudo console is not implemented"})
	}
	if req.SystemdCgroup {
		plan.Refusals = append(plan.Refusals, Refusal{Field: "--systemd-cgroup", Rule: "windows.cgroups", Reason: "Windows has no cgroups"})
	}
	if req.PidfdSocket != "" {
		plan.Refusals = append(plan.Refusals, Refusal{Field: "--pidfd-socket", Rule: "windows.pidfd", Reason: "pidfds are Linux's"})
	}
	if req.PreserveFDs > 0 {
		plan.Refusals = append(plan.Refusals, Refusal{Field: "--preserve-fds", Rule: "windows.preserve-fds", Reason: "only the three standard handles are passed into the job"})
	}
	return plan, nil
}

// appContainerName is a profile name unique to this create: a crashed
// container's grants (to its SID) never reach a later one of the same id.
// Profile names are at most 64 characters of letters, digits, '.', '-'
// and '_'.
func appContainerName(id string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	clean := strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '-' || r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, id)
	const prefix = "vetto."
	if max := 64 - len(prefix) - 1 - 2*len(b); len(clean) > max {
		clean = clean[:max]
	}
	return prefix + clean + "." + hex.EncodeToString(b)
}

// Load opens the container whose state is in dir.
func (b *Backend) Load(dir, id string) (runtime.Container, error) { return b.load(dir, id) }

// ParseSignal accepts what can be delivered to a job: KILL, TERM and INT
// (or 9, 15, 2) all terminate every process of the container — Windows
// has no signals, and the job is terminated whole.
func (*Backend) ParseSignal(s string) (syscall.Signal, error) {
	switch strings.TrimPrefix(strings.ToUpper(s), "SIG") {
	case "KILL", "9":
		return 9, nil
	case "TERM", "15":
		return 15, nil
	case "INT", "2":
		return 2, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return 0, fmt.Errorf("signal %d cannot be delivered on Windows (only 2, 9, 15: terminate)", n)
	}
	return 0, fmt.Errorf("unknown signal %q (Windows: KILL, TERM or INT, which all terminate)", s)
}

// ExampleSpec is a Windows bundle: host-root on C:\, no grants (an
// AppContainer reads the system directories already), no network.
func (b *Backend) ExampleSpec(bool) (*specs.Spec, error) {
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: `C:\`},
		Process: &specs.Process{
			Args: []string{`C:\Windows\System32\cmd.exe`, "/c", "echo", "hello"},
			Env:  []string{`PATH=C:\Windows\System32;C:\Windows`, `SystemRoot=C:\Windows`},
			Cwd:  `C:\`,
		},
		Annotations: map[string]string{spec.AnnotationNet: "none"},
	}, nil
}

// Features says what this backend accepts of a spec.
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
			"dev.vetto.runtime.backend": "job+appcontainer",
		},
	}, nil
}
