// Package runtime is vetto-runtime's platform-neutral core: the container
// lifecycle and its state machine, the state store and its locks, the error
// taxonomy and the exit codes. It never imports a platform package or the CLI
// library; a Backend does the platform work.
package runtime

import (
	"errors"
	"fmt"
)

// Errors callers branch on. Where runc has a sentinel for the same condition
// the text is runc's, word for word: containerd and podman match on it
// (e.g. "container does not exist" makes containerd treat a delete as done).
var (
	ErrNotExist   = errors.New("container does not exist")
	ErrExist      = errors.New("container with given ID already exists")
	ErrInvalidID  = errors.New("invalid container ID format")
	ErrNotRunning = errors.New("container not running")
	ErrRunning    = errors.New("container still running")
	ErrPaused     = errors.New("container paused")
	ErrNotPaused  = errors.New("container not paused")
	// ErrBusy: another command held the container's lock for longer than
	// a command waits.
	ErrBusy = errors.New("container busy")

	// ErrInvalidInput marks bad input from the user: flags, bundle, ids.
	ErrInvalidInput = errors.New("invalid input")
	// ErrWrongState marks an operation the container's state does not allow
	// (start of a stopped container, delete of a running one).
	ErrWrongState = errors.New("operation not allowed in the container's state")
	// ErrNotFound marks a missing executable in the container; its text
	// comes from the backend in runc's words ("executable file not found in
	// $PATH", "no such file or directory"), which podman maps to exit 127.
	ErrNotFound = errors.New("executable not found")
	// ErrHookFailed marks an OCI hook that failed where the spec says the
	// runtime must fail the operation.
	ErrHookFailed = errors.New("hook failed")
)

// The sandbox could not be established or verified (exit 125).
// docs/architecture.md maps each to the fatal state it leaves, if any.
var (
	ErrBackendUnavailable  = errors.New("backend unavailable")
	ErrPreLaunchFailed     = errors.New("pre-launch verification failed")
	ErrPostLaunchFailed    = errors.New("post-launch verification failed")
	ErrSpecMismatch        = errors.New("spec mismatch")
	ErrDegradedRefused     = errors.New("degraded launch refused")
	ErrTeardownIncomplete  = errors.New("teardown incomplete")
	ErrSpawnFailed         = errors.New("sandbox spawn failed")
	ErrPolicyCompileFailed = errors.New("policy compilation failed")
	// ErrDriftDetected: what was verified or compiled no longer holds — a
	// running container moved (verify), or the host changed under a
	// policy bundle since it was compiled (create).
	ErrDriftDetected = errors.New("drift detected")
	// ErrUnknownAfterReboot: the container's record outlived a reboot of
	// the host; what it recorded (pids, cgroups, the verified init) is of
	// another boot, so nothing but delete may act on it.
	ErrUnknownAfterReboot = errors.New("container unknown after reboot")
)

// ErrFloorForbids marks a request the operator's floor forbids (exit 126).
var ErrFloorForbids = errors.New("forbidden by the operator floor")

// kindError is an error of a kind whose message is not the kind's text:
// errors.Is finds the kind, the user reads only the specific message.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// Errorf formats an error (with %w support) and tags it with kind.
func Errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, err: fmt.Errorf(format, args...)}
}

// WithKind tags err with kind, keeping err's message.
func WithKind(kind, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: kind, err: err}
}
