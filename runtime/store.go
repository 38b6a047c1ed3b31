package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// Layout of one container's directory under --root:
//
//	<root>/<id>/            created exclusively by create; its lock
//	<root>/<id>/vetto.json  the Record, written temp + rename
//	<root>/<id>/config.json the effective (frozen) spec handed to the backend
//	<root>/<id>/backend/    the backend's own state (libcontainer's on Linux)
const (
	recordFile   = "vetto.json"
	specFileName = "config.json"
	backendDir   = "backend"
)

// Store is the --root directory that holds every container's state.
type Store struct {
	Root string
	// AuditLog, if set, receives every audit event too (--audit-log).
	AuditLog string
	// Evidence is the host-wide audit log and frozen hashes; the zero
	// value keeps none (unit tests).
	Evidence Evidence
	// Waitf, if set, says that a command waits for another holding a
	// container's lock, and who that is.
	Waitf func(format string, args ...any)
	// batch, when set, holds this process's audit events until they go
	// out together (auditLocked); nil writes each at once.
	batch *auditBatch
	// frozen, when set, keeps the frozen specs this process wrote
	// (readSpec); nil reads every one from disk.
	frozen *frozenMemo
}

// locked hands out a container lock that, when released, first writes
// the audit events the command left pending: nothing of a command is in
// the log before an event that needs it, or after the lock is gone.
func (s Store) locked(l *lock) *lock {
	if s.batch != nil && l != nil {
		l.flush = func() {
			if err := s.flushAudit(false); err != nil && s.Waitf != nil {
				s.Waitf("%v", err)
			}
			if err := s.waitDurable(); err != nil && s.Waitf != nil {
				s.Waitf("%v", err)
			}
		}
	}
	return l
}

// lockWaitLimit bounds how long a command waits for another that holds a
// container's lock: no wait in the runtime is unbounded.
var lockWaitLimit = 60 * time.Second

// waiting is what lockDir calls when the lock is held.
func (s Store) waiting(id string) func(string) {
	if s.Waitf == nil {
		return nil
	}
	return func(holder string) {
		s.Waitf("container %q is locked by %s; waiting (at most %s)", id, holder, lockWaitLimit)
	}
}

func (s Store) dir(id string) string { return filepath.Join(s.Root, id) }

// BackendDir is where the backend keeps its state for container id.
func (s Store) BackendDir(id string) string { return filepath.Join(s.dir(id), backendDir) }

// Record is what vetto-runtime remembers of a container beside the backend's
// own state: where it came from, who made it, and its vetto state.
type Record struct {
	ID          string            `json:"id"`
	Bundle      string            `json:"bundle"`
	Rootfs      string            `json:"rootfs"`
	Created     time.Time         `json:"created"`
	Owner       string            `json:"owner"`
	Backend     string            `json:"backend"`
	State       State             `json:"state"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Reason says why the container is in a fatal state.
	Reason string `json:"reason,omitempty"`
	// Level is the security level the container was launched at.
	Level Level `json:"level"`
	// SpecHash is sha256 of the frozen spec's RFC 8785 canonical form.
	SpecHash string `json:"specHash,omitempty"`
	// Degraded names each accepted degradation (at degraded, or allowed
	// with --allow-degraded).
	Degraded []string `json:"degraded,omitempty"`
	// Notes are recorded facts that are no failure (less privilege than
	// asked, capabilities unset).
	Notes []string `json:"notes,omitempty"`
	// Posture names what the spec gives of the host away; empty:
	// isolated.
	Posture []string `json:"posture,omitempty"`
	// Allow is what the launch accepted as degradable (the caller's
	// --allow-degraded and the bundle's own), for the pre-launch checks.
	Allow []string `json:"allow,omitempty"`
	// LaunchLine is the one line printed before the process ran.
	LaunchLine string `json:"launchLine,omitempty"`
	// Landlock is the ruleset the container's process runs under (the
	// plan's); exec gives every other process the same.
	Landlock string `json:"landlock,omitempty"`
	// NoVerify: the launch skipped post-launch verification (--no-verify),
	// a degradation named in Degraded.
	NoVerify bool `json:"noVerify,omitempty"`
	// Canary: the process was created behind the exec shim, which runs
	// the P3 canaries in its own domain before it execs the program
	// (hooks.CanarySession): at create (CanariesAtCreate) or at start.
	Canary bool `json:"canary,omitempty"`
	// CanariesAtCreate: the init made the canaries at create, before it
	// waited for start (CreateRequest.CanaryAtCreate); Canaries are their
	// verdicts, and CanaryTook how long they took, judged again with the
	// post-exec checks at start.
	CanariesAtCreate bool           `json:"canariesAtCreate,omitempty"`
	Canaries         []hooks.Result `json:"canaries,omitempty"`
	CanaryTook       time.Duration  `json:"canaryTook,omitempty"`
	// Rootless: created by a runtime without root on the host. NoCgroup:
	// in no cgroup at all (no delegation; limits and cgroup-kill were
	// accepted degradations), so teardown goes through the pid namespace.
	Rootless bool `json:"rootless,omitempty"`
	NoCgroup bool `json:"noCgroup,omitempty"`
	// OwnPidNamespace: the container has a pid namespace of its own, so
	// the host can tell its processes from everyone else's.
	OwnPidNamespace bool `json:"ownPidNamespace,omitempty"`
	// Baseline is the init as the host saw it when pre-launch
	// verification passed; P1 and P2 compare with it.
	Baseline *hooks.Baseline `json:"baseline,omitempty"`
	// Executable is the file the process will exec, as the host found it
	// in the container's root at create: start refuses another, and the
	// post-exec check compares /proc/<pid>/exe with it.
	Executable *hooks.Executable `json:"executable,omitempty"`
	// Verification is the outcome of the last post-launch or on-demand
	// verification (PASS, FAIL, INCONCLUSIVE), Verdicts its checks.
	Verification string         `json:"verification,omitempty"`
	Verdicts     []hooks.Result `json:"verdicts,omitempty"`
	// Poststart are the verdicts of the launch, kept when verify replaces
	// Verdicts: the canaries, which run once, before the program, are
	// there. Until then they are Verdicts (VerdictsAreLaunch), not stored
	// twice: they were half the record, which every later command reads.
	// LaunchVerdicts reads them either way.
	Poststart         []hooks.Result `json:"poststart,omitempty"`
	VerdictsAreLaunch bool           `json:"verdictsAreLaunch,omitempty"`
	// Monitor is the container's monitor process and what it did; nil
	// when it has none.
	Monitor *MonitorState `json:"monitor,omitempty"`
	// Limits are the memory and pids limits as they stand: the frozen
	// spec's, changed by audited updates since. verify's P7 reads the
	// cgroup back against these, so an audited update is not taken for
	// drift; a limit an accepted update removed is -1, and P7 says so
	// rather than dropping the check.
	Limits launch.Limits `json:"limits"`
	// BootID is the host's boot id at create
	// (/proc/sys/kernel/random/boot_id). A record read in another boot
	// (a --root on persistent storage) is unknown-after-reboot: its pids
	// and cgroups are gone, and the same numbers may be someone else's.
	BootID string `json:"bootId,omitempty"`
	// Receipt is the last teardown's; a container whose teardown left
	// something keeps its state with the receipt saying what.
	Receipt *hooks.Receipt `json:"receipt,omitempty"`

	// teardownOnExit (this process's, never stored) says the caller — a
	// foreground run that keeps nothing — tears the container down under
	// the lock start holds if its init exits before it can be verified:
	// the EXITED verdicts' record is then not written on its own, since
	// nothing outside this process can read it before that teardown
	// removes it, or writes it if it cannot (as passLocked).
	teardownOnExit bool
	// promotionPending (this process's, never stored): judgeLocked passed
	// the record to VerifiedRuntime for such a run without writing it;
	// verdictsDurableLocked writes it if the run lets the lock go, and a
	// teardown that follows first removes the state instead.
	promotionPending bool
	// lost (this process's, never stored): the record was missing or
	// unreadable and this one was made from the backend's state for a
	// delete --force (deleteWithoutRecordLocked). Its SpecHash is the
	// evidence directory's copy, if any; without one the stored spec is
	// not trusted (readSpec).
	lost bool
}

// createDirLocked makes the container's directory, failing with ErrExist if
// it is there already (mkdir is the atomic test-and-set), and returns it
// locked. The root is created 0700: it holds every container's state.
func (s Store) createDirLocked(id string) (*lock, error) {
	if err := os.MkdirAll(s.Root, 0o700); err != nil {
		return nil, fmt.Errorf("create state root %s: %w", s.Root, err)
	}
	dir := s.dir(id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%q: %w", id, ErrExist)
		}
		return nil, fmt.Errorf("create state dir %s: %w", dir, err)
	}
	l, err := lockDir(dir, nil)
	if err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return s.locked(l), nil
}

// lockContainer takes container id's lock, waiting for whoever holds it.
// It fails with ErrNotExist if there is no such container, or if the one
// that was there got deleted while we waited.
func (s Store) lockContainer(id string) (*lock, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	l, err := lockDir(s.dir(id), s.waiting(id))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%q: %w", id, ErrNotExist)
		}
		return nil, err
	}
	return s.locked(l), nil
}

// tryLockContainer is lockContainer that does not wait: ErrBusy when
// another command holds the lock.
func (s Store) tryLockContainer(id string) (*lock, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	l, err := tryLockDir(s.dir(id))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%q: %w", id, ErrNotExist)
		}
		return nil, err
	}
	return s.locked(l), nil
}

// readRecord loads container id's record. A directory with no record is a
// create that has not got far (or died early): not a container yet.
func (s Store) readRecord(id string) (*Record, error) {
	data, err := readNoFollow(filepath.Join(s.dir(id), recordFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%q: %w", id, ErrNotExist)
		}
		return nil, fmt.Errorf("read state of %q: %w", id, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read state of %q: %s: %w", id, recordFile, err)
	}
	if r.ID != id {
		return nil, fmt.Errorf("state of %q names container %q", id, r.ID)
	}
	return &r, nil
}

// writeRecordLocked saves r atomically; the caller holds r's lock.
func (s Store) writeRecordLocked(r *Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode state of %q: %w", r.ID, err)
	}
	return writeFileAtomic(filepath.Join(s.dir(r.ID), recordFile), data, 0o600)
}

// moveLocked moves r to state to, refusing moves the state machine forbids,
// and persists it.
func (s Store) moveLocked(r *Record, to State, reason string) error {
	from := r.State
	if err := advance(r, to, reason); err != nil {
		return err
	}
	if err := s.writeRecordLocked(r); err != nil {
		return err
	}
	return s.auditTransitionLocked(r, from, to, reason)
}

// passLocked moves r through a state nothing outside this process can
// observe it in — the next step follows at once and writes the record —
// so the record is not written for it; the audit log still gets the
// transition. A crash in between leaves the record in the state before,
// which is what it then is: not yet past the step.
func (s Store) passLocked(r *Record, to State, reason string) error {
	from := r.State
	if err := advance(r, to, reason); err != nil {
		return err
	}
	return s.auditTransitionLocked(r, from, to, reason)
}

func advance(r *Record, to State, reason string) error {
	if err := Transition(r.State, to); err != nil {
		return fmt.Errorf("container %q: %w", r.ID, err)
	}
	r.State = to
	if reason != "" {
		r.Reason = reason
	}
	return nil
}

func (s Store) auditTransitionLocked(r *Record, from, to State, reason string) error {
	return s.auditLocked(AuditEvent{ID: r.ID, Spec: r.SpecHash, Level: r.Level.String(), Event: "transition", From: from, To: to, Reason: reason}, to.Fatal())
}

// ids lists the directories under root that look like containers.
func (s Store) ids() ([]string, error) {
	entries, err := os.ReadDir(s.Root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", s.Root, err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && ValidateID(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// removeLocked removes container id's directory; the caller holds its lock,
// so anyone waiting for it sees the container gone.
func (s Store) removeLocked(id string) error {
	if err := os.RemoveAll(s.dir(id)); err != nil {
		return fmt.Errorf("remove state of %q: %w", id, err)
	}
	s.Evidence.forgetFrozen(s.Root, id)
	s.frozen.forget(id)
	return nil
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it over path, so a reader sees the old content or the new, never a torn
// one, and a runtime killed mid-write leaves no half-written file under the
// real name. It does not fsync: container state lives as long as the host
// is up (it belongs in tmpfs), and a power loss that could tear it also
// ends every container it describes. Durable evidence goes to the audit
// log, which syncs; files that callers poll (the pid file) use
// writeFileSynced.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return writeFile(path, data, perm, false)
}

// writeFileSynced is writeFileAtomic plus an fsync before the rename.
func writeFileSynced(path string, data []byte, perm fs.FileMode) error {
	return writeFile(path, data, perm, true)
}

// LaunchVerdicts are the verdicts of the launch (poststart): Verdicts until
// a verify replaced them, Poststart after.
func (r *Record) LaunchVerdicts() []hooks.Result {
	if r.VerdictsAreLaunch {
		return r.Verdicts
	}
	return r.Poststart // none when the launch recorded none (--no-verify)
}
