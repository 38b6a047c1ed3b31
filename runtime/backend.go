package runtime

import (
	"syscall"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
	"github.com/vetto-dev/vetto-runtime/shim"
)

// Status is the OCI status of a container as the backend sees it live.
type Status string

const (
	StatusCreating Status = "creating"
	StatusCreated  Status = "created"
	StatusRunning  Status = "running"
	StatusPaused   Status = "paused"
	StatusStopped  Status = "stopped"
)

// Backend runs containers on one platform. The core owns ids, locks, the
// vetto state and the poststart/poststop hooks; the backend owns everything
// that touches the kernel. A backend runs the prestart, createRuntime,
// createContainer and startContainer hooks itself, at the points the OCI
// spec sets, and must not run poststart or poststop: the core does, after
// Start and after Destroy, where the spec puts them.
type Backend interface {
	// Name names the backend in state and logs ("linux").
	Name() string
	// Create builds the container: when it returns, the init process
	// exists and waits for Start, and the pid file may be written. For a
	// foreground request it also returns the Foreground handle.
	Create(req *CreateRequest) (Container, Foreground, error)
	// Load opens the container whose state is in dir.
	Load(dir, id string) (Container, error)
	// ParseSignal turns a name ("KILL", "SIGKILL") or number into a signal.
	ParseSignal(s string) (syscall.Signal, error)
	// ExampleSpec is the default config.json that `spec` writes.
	ExampleSpec(rootless bool) (*specs.Spec, error)
	// Features is the OCI features document of this build on this host.
	Features() (*features.Features, error)
}

// Sweeper is implemented by backends that can clean up after a create that
// died before the backend recorded the container (a runtime killed with
// SIGKILL mid-create): it finds the container's resources from the frozen
// spec, kills what runs there (the user's process never ran), removes
// them, and says how many processes it killed.
type Sweeper interface {
	Sweep(id string, sp *specs.Spec) (int, error)
}

// LaunchFacts is implemented by backends that read the host facts the
// launch evaluator needs beyond the bundle itself.
type LaunchFacts interface {
	// AppArmorEnabled reports whether AppArmor confines processes here.
	AppArmorEnabled() bool
	// CgroupInUse describes the cgroup the spec's cgroupsPath names when
	// it already exists and holds processes (a create would then share
	// it, and teardown kill them), and is "" otherwise.
	CgroupInUse(sp *specs.Spec, id string, systemd bool) (string, error)
	// Cgroups says whether the runtime runs rootless and, if so, whether
	// it has a cgroup to put the container in (a delegated subtree, the
	// systemd user manager) or why not. It creates nothing.
	Cgroups(sp *specs.Spec, id string, systemd bool) CgroupAccess
	// UsernsRefusal says why this (rootless) caller cannot make the user
	// namespace a container needs, "" when it can.
	UsernsRefusal() string
}

// PlatformBackend is implemented by backends that translate the spec for
// a sandbox other than Linux's namespaces (darwin's Seatbelt, Windows'
// job). Before anything exists the core asks what the platform refuses of
// a request and what it gives only in part, and hands that to the launch
// evaluator as host facts (launch.Host.Platform): one set of rules — the
// level, --allow-degraded, the bundle's opt-ins, the floor — decides every
// launch, and what it accepts is on the launch line and in the record.
type PlatformBackend interface {
	// Platform translates req (its Spec, and the options beyond it) and
	// says what the translation refuses and degrades, and whether the
	// backend's containers report verdicts (VerifyingContainer). It
	// creates nothing.
	Platform(req *CreateRequest) (*launch.Platform, error)
}

// VerifyingContainer is implemented by containers whose backend reads
// host facts of its own platform's sandbox where the core has none
// (Runtime.Facts nil): darwin asks the kernel with sandbox_check and reads
// the process table, the Windows holder reads the job and the token. The
// backend only reports; the core records the verdicts (the record, the
// audit log, state and verify) and judges them with the evaluator's
// rules (Decision.PreLaunch, launch.PostLaunch), as on Linux.
type VerifyingContainer interface {
	// PreLaunch are the verdicts on the process as Create left it, before
	// the program can run (held on darwin, suspended on Windows).
	PreLaunch() []hooks.Result
	// PostLaunch are the verdicts on the running process, and the
	// platform's canaries, as Start read them.
	PostLaunch() []hooks.Result
	// OnDemand reads and judges the running process again, for verify;
	// errors.ErrUnsupported where the backend cannot.
	OnDemand() ([]hooks.Result, error)
}

// CgroupAccess is what the caller of the runtime may do with cgroups (the
// evaluator's launch.Cgroups, as the backend reports it).
type CgroupAccess = launch.Cgroups

// CreateRequest is everything the backend needs to build one container.
type CreateRequest struct {
	ID     string
	Dir    string // the backend's own state directory; does not exist yet
	Bundle string // absolute
	// Spec is the effective spec: validated, with bundle-relative paths
	// resolved. The backend must not change what it means.
	Spec *specs.Spec

	ConsoleSocket string // unix socket to send the pty master to
	// PidfdSocket is a unix socket to send a pidfd of the container's
	// init to (runc's --pidfd-socket); "" for none.
	PidfdSocket string
	// ListenFDs are socket activation's (LISTEN_FDS): fds 3..3+n-1 go to
	// the container as they are, and its process gets LISTEN_FDS=n and
	// LISTEN_PID=1 (runc's contract). PreserveFDs follow them.
	ListenFDs   int
	PreserveFDs int // pass the next n fds to the container too
	// BinDir is a directory private to the runtime's user that outlives
	// containers (bin/ of the evidence directory), for a BinDirBackend's
	// own executables; "" where there is none.
	BinDir string
	// Landlock is the ruleset (dev.vetto.landlock form) the process must
	// run under, as the plan decided it; empty for none. The init
	// restricts itself with it in its pre-exec step.
	Landlock string
	// Canary asks for the P3 canaries in the process's own domain: the
	// init's pre-exec step makes the canaries' attempts before it execs,
	// at start (Start, Proceed) or, with CanaryAtCreate, at create.
	Canary bool
	// CanaryAtCreate: the init makes the canaries' attempts at create,
	// right after it is built, and then waits for start; create judges
	// them (CreateCanaries). Without it they are made at start.
	CanaryAtCreate bool
	// StartsHere: this process starts the container itself, through the
	// Container Create returns (run): nothing in the state directory
	// need let another process reach the init before start.
	StartsHere    bool
	NoPivot       bool
	NoNewKeyring  bool
	SystemdCgroup bool
	// NoCgroup: create the container in no cgroup (the plan accepted a
	// rootless launch without delegation): no limits are set, and
	// Teardown kills the pid namespace instead.
	NoCgroup bool

	// Foreground: the caller waits for the container (run without
	// --detach): stdio goes through pipes or a new pty bridged to the
	// caller's terminal, and signals are forwarded.
	Foreground  bool
	NoSubreaper bool
}

// CreateCanaries is a Container whose init makes its canaries at create
// (CreateRequest.CanaryAtCreate).
type CreateCanaries interface {
	// Canaries sends the plan to the init's pre-exec step, waiting after
	// its restrictions, and returns the report of its attempts; the step
	// then waits for Proceed: true lets it wait for start, false makes
	// the init exit without running the process.
	Canaries(ask *canary.Config) (*canary.Report, error)
}

// Container is one container as the backend knows it.
type Container interface {
	ID() string
	Status() (Status, error)
	// InitPid is the host pid of the init process, 0 if there is none.
	InitPid() int
	// OCIState is the state the OCI spec hands to hooks.
	OCIState() (*specs.State, error)
	// Start runs sp's startContainer hooks in the container and lets the
	// waiting init go. Without canaries it returns once the init has
	// exec'd the user process (or died). With canaries (the container was
	// created with CreateRequest.Canary) the init's exec shim makes the
	// attempts canary asks for in the process's own domain and Start
	// returns its report while the shim waits: the caller judges, then
	// calls Proceed. A failing hook fails Start before the process runs.
	Start(sp *specs.Spec, ask *canary.Config) (*canary.Report, error)
	// Proceed answers a shim waiting after its canaries: exec the user
	// process (and return once it has), or exit without running it. Without
	// canaries it does nothing.
	Proceed(exec bool) error
	// CgroupPaths are the cgroup directories the container is in, by
	// controller ("" for cgroup v2).
	CgroupPaths() map[string]string
	// Signal sends sig to the init, or with all to every process of the
	// container. A container with no live init gives ErrNotRunning.
	Signal(sig syscall.Signal, all bool) error
	// Destroy removes everything the container holds (processes must be
	// gone) and its backend state.
	Destroy() error
	// Teardown kills every process of the container at once (cgroup.kill
	// where the kernel has it), waits until its cgroups are empty, removes
	// them and the backend state, and returns what it found: killed,
	// remaining, cgroups removed. The core adds the pid namespace and the
	// relay. An error means it could not even look.
	Teardown() (*hooks.Receipt, error)

	// Exec starts another process in the running container, with the
	// container's namespaces, cgroup and seccomp filter, and returns its
	// host pid; in the foreground also the handle to wait on it.
	Exec(req *ExecRequest) (int, Foreground, error)
	// Processes lists the host pids of every process in the container.
	Processes() ([]int, error)
	// Pause freezes every process of the container; Resume thaws them.
	Pause() error
	Resume() error
	// Stats returns the container's resource usage in runc's `events`
	// shape, ready to be encoded as JSON.
	Stats() (any, error)
	// NotifyOOM delivers a value each time the container hits its memory
	// limit; the channel closes when the container is gone.
	NotifyOOM() (<-chan struct{}, error)
	// Update changes the container's resource limits.
	Update(r *specs.LinuxResources) error
}

// ExecRequest is one process to start in a running container.
type ExecRequest struct {
	Process       *specs.Process
	ConsoleSocket string
	// PidfdSocket is CreateRequest's, for the exec'd process.
	PidfdSocket string
	// SubCgroups are the sub-cgroups of the container's to run the
	// process in, by controller ("" for every one), as SubCgroups
	// parsed them; nil for the container's own.
	SubCgroups  map[string]string
	Detach      bool
	PreserveFDs int
	// Landlock is the container's ruleset (the Record's), empty for none:
	// the exec'd process gets the same restriction as the container's, in
	// its init's pre-exec step.
	Landlock string
	// BinDir is CreateRequest's.
	BinDir string
}

// BinDirBackend is a backend that keeps executables of its own in a
// directory private to the runtime's user (Linux: the init executable its
// containers' inits start as). The core makes the directory, bin/ of the
// evidence directory, checked as the evidence is, and names it in
// CreateRequest and ExecRequest.
type BinDirBackend interface {
	UsesBinDir() bool
}

// ShimContainer is implemented by containers whose process runs a
// pre-exec step in its init (Linux: Landlock, the canaries), for the pre-
// and post-launch checks that it does.
type ShimContainer interface {
	// LaunchPlan is what the backend handed the init: the pre-exec
	// step's config (nil: none) and the argv it will exec; known is false
	// when another process created the container.
	LaunchPlan() (step *shim.Config, args []string, known bool)
	// InitExe identifies (device, inode) the file the init runs now.
	InitExe() ([2]uint64, error)
}

// ExecutableContainer is implemented by containers whose backend reads,
// from the host, the file the container's process will exec: args[0]
// resolved in the container's root as its init resolves it.
type ExecutableContainer interface {
	// Executable identifies the file; with digest, its sha256 too.
	Executable(proc *specs.Process, digest bool) (*hooks.Executable, error)
	// HoldRoot keeps the container's root open, mounts and all, until
	// release, so Executable still answers once the init is gone.
	HoldRoot() (release func(), err error)
}

// ForegroundPreparer is a backend that can begin what a foreground
// process needs before the container work reaches it: on Linux,
// registering for every signal, a few milliseconds of round trips through
// the Go runtime, done alongside the plan and the records instead of
// before the init starts. The backend still finishes it before the
// process it is for can run (a run's program, an exec's process). create
// calls it first thing, since its lock (a new directory's) is never
// waited for; exec once it holds the container's lock, so a wait for the
// lock can still be interrupted.
type ForegroundPreparer interface {
	PrepareForeground()
}

// Foreground is the caller's handle on a container it waits for.
type Foreground interface {
	// Wait forwards signals to the init until it exits and returns its
	// exit status; a death by signal n is 128+n, as a shell reports it.
	Wait() (int, error)
	// Close releases stdio and restores the caller's terminal.
	Close()
}

// ExitAwaiter is a Foreground that can wait a bounded time for the init
// to exit without reaping it (Wait does that next): true if it exited.
type ExitAwaiter interface {
	AwaitExit(limit time.Duration) bool
}

// NotifyRelayer is implemented by backends whose containers can be given a
// host directory by bind mount, so that the runtime can relay the
// caller's NOTIFY_SOCKET into them (notify.go). Others ignore it, with a
// warning.
type NotifyRelayer interface {
	RelaysNotify() bool
}
