package runtime

import (
	"errors"
	"fmt"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// Runtime is the lifecycle engine over one state root and one backend.
type Runtime struct {
	Store   Store
	Backend Backend
	// Facts reads host facts of live processes for the pre-launch
	// verification; nil on platforms without namespaces.
	Facts hooks.Facts
	// Config is the operator's runtime.toml (the floor and settings); nil
	// means none.
	Config *Config
	// ConfigPath is where the runtime reads Config (--config), there or
	// not: a container that could write it would set the next launch's
	// floor.
	ConfigPath string
	// LogPath is the runtime's log file (--log), "" for none or for a
	// descriptor (/dev/stderr, /proc/self/fd/N): the error line a client
	// (containerd, podman) reads back after a failure, and a file the
	// runtime appends to as root.
	LogPath string
	// Environ is the runtime's environment, scanned for VETTO_* overrides.
	Environ []string
	// Launchf prints the launch line (stderr, or the log).
	Launchf func(format string, args ...any)
	// Warnf reports a problem that does not fail the operation (a failing
	// poststop hook, say). It must not be nil.
	Warnf func(format string, args ...any)
	// SpawnMonitor starts `vetto-runtime monitor <id>` detached, and
	// returns its pid and start time (clock ticks); nil: no monitor on
	// this platform.
	SpawnMonitor func(id string) (pid int, startTime uint64, err error)
	// LandlockABI probes the host's Landlock ABI version (0: none); nil
	// means the kernel's (landlock.HostABI). Tests set it.
	LandlockABI func() (int, error)
	// BootID reads the current boot's id; nil means the kernel's
	// (/proc/sys/kernel/random/boot_id). Tests set it.
	BootID func() string
	// Self is this runtime's executable, which the effective spec's own
	// poststart and poststop hooks name (spec.RuntimeHook); empty adds
	// none.
	Self string
	// Invoked is the absolute path the caller ran this runtime by ("" if
	// unknown): a symlink on it is the caller's way to the runtime.
	Invoked string
}

// New returns a Runtime; root must be absolute.
func New(root string, b Backend, facts hooks.Facts, warnf func(string, ...any)) (*Runtime, error) {
	if root == "" || root[0] != '/' {
		return nil, Errorf(ErrInvalidInput, "state root %q must be an absolute path", root)
	}
	if warnf == nil {
		warnf = func(string, ...any) {}
	}
	return &Runtime{Store: Store{Root: root, Waitf: warnf, batch: &auditBatch{}, frozen: &frozenMemo{}}, Backend: b, Facts: facts, Warnf: warnf, Launchf: warnf}, nil
}

// loadLocked locks container id and loads its record and backend container.
// The caller must unlock. A container whose create never got to the backend
// has a record but no backend state; c is nil then.
func (r *Runtime) loadLocked(id string) (*lock, *Record, Container, error) {
	l, err := r.Store.lockContainer(id)
	if err != nil {
		return nil, nil, nil, err
	}
	rec, err := r.Store.readRecord(id)
	if err != nil {
		l.unlock()
		return nil, nil, nil, err
	}
	if r.fromAnotherBoot(rec) {
		// start, kill, exec, verify, pause, update: each would act
		// through a pid or cgroup of another boot.
		l.unlock()
		return nil, nil, nil, r.errUnknownAfterReboot(rec)
	}
	c, err := r.Backend.Load(r.Store.BackendDir(id), id)
	if err != nil {
		if isNotExist(err) {
			return l, rec, nil, nil
		}
		l.unlock()
		return nil, nil, nil, fmt.Errorf("load %q: %w", id, err)
	}
	return l, rec, c, nil
}

func isNotExist(err error) bool {
	return err != nil && errors.Is(err, ErrNotExist)
}
