package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
)

// A command's events go out together: nothing before the lock is let go
// or an event that is evidence comes, then everything, in order, in one
// append per log.
func TestAuditBatch(t *testing.T) {
	root := t.TempDir()
	s := Store{Root: root, AuditLog: filepath.Join(root, "all.jsonl"), batch: &auditBatch{}}
	l, err := s.createDirLocked("c1")
	if err != nil {
		t.Fatal(err)
	}
	read := func() string {
		data, err := os.ReadFile(s.AuditLog)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, ev := range []string{"transition", "warning"} {
		if err := s.auditLocked(AuditEvent{ID: "c1", Event: ev}, false); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(); got != "" {
		t.Fatalf("events written before the command let go of the lock: %q", got)
	}
	if err := s.auditLocked(AuditEvent{ID: "c1", Event: "verdicts"}, true); err != nil {
		t.Fatal(err)
	}
	if got := read(); strings.Count(got, "\n") != 3 || !strings.Contains(got, `"event":"transition"`) || strings.Index(got, "transition") > strings.Index(got, "verdicts") {
		t.Fatalf("an evidence event did not take the pending ones with it, in order: %q", got)
	}
	if err := s.auditLocked(AuditEvent{ID: "c1", Event: "transition", To: StateRunning}, false); err != nil {
		t.Fatal(err)
	}
	l.unlock()
	if got := read(); strings.Count(got, "\n") != 4 {
		t.Fatalf("the lock went without the pending event: %q", got)
	}
	local, err := os.ReadFile(filepath.Join(root, "c1", auditFile))
	if err != nil || strings.Count(string(local), "\n") != 4 {
		t.Fatalf("the container's own log: %q, %v", local, err)
	}
	// A container whose directory is gone (deleted) has no log of its own
	// to add to; the others still get the event.
	l, err = s.lockContainer("c1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.auditLocked(AuditEvent{ID: "c1", Event: "receipt"}, false); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "c1")); err != nil {
		t.Fatal(err)
	}
	if err := s.flushAudit(true); err != nil {
		t.Fatalf("flush after the directory went: %v", err)
	}
	l.unlock()
	if got := read(); !strings.Contains(got, `"receipt"`) {
		t.Fatalf("the receipt was lost: %q", got)
	}
}

// run writes the launch's evidence and lets its fsync overlap the start,
// but the program never execs before that fsync is done, with canaries
// (the verdict to the shim) or without (the init let go); and a launch
// whose evidence cannot be made durable runs nothing. Dropping either
// wait in startWithCanaries fails a row.
func TestRunLaunchDurableBeforeTheProgram(t *testing.T) {
	for _, tc := range []launchDurableCase{
		{name: "without canaries"},
		{name: "with canaries", canary: true},
		{name: "the launch's fsync fails", syncErr: errors.New("EIO")},
		{name: "the launch's fsync fails, with canaries", canary: true, syncErr: errors.New("EIO")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, b := launchTestRuntime(t, tc.canary)
			var mu sync.Mutex
			synced, calls, execed := false, 0, 0
			defer func(f func(*os.File) error) { syncLog = f }(syncLog)
			syncLog = func(f *os.File) error {
				mu.Lock()
				calls++
				first := calls == 1
				mu.Unlock()
				if !first {
					return f.Sync()
				}
				// The launch's: slow, so a start that does not wait
				// for it gets to the exec first.
				time.Sleep(100 * time.Millisecond)
				mu.Lock()
				synced = true
				mu.Unlock()
				if tc.syncErr != nil {
					return tc.syncErr
				}
				return f.Sync()
			}
			b.execs = func() {
				mu.Lock()
				defer mu.Unlock()
				execed++
				if !synced {
					t.Errorf("the program execs before the launch's evidence is durable")
				}
			}
			opts := RunOptions{CreateOptions: CreateOptions{ID: "c1", Bundle: writeBundle(t, func(s *specs.Spec) {
				s.Linux.MaskedPaths = []string{"/proc/kcore"}
			})}, Detach: true}
			_, err := r.Run(opts)
			rec, _ := r.Store.readRecord("c1")
			if tc.canary != (rec != nil && rec.Canary) && err == nil {
				t.Fatalf("canaries %v, want %v (the fake bundle decides)", rec != nil && rec.Canary, tc.canary)
			}
			if tc.syncErr != nil {
				if err == nil || !strings.Contains(err.Error(), "EIO") {
					t.Fatalf("run with the launch's fsync failing: %v", err)
				}
				if execed != 0 {
					t.Fatalf("the program execed %d times though its launch was not durable", execed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if execed != 1 {
				t.Fatalf("the program execed %d times, want 1", execed)
			}
		})
	}
}

// create writes the launch's evidence before its canaries' exchange and
// lets the fsync run beside it, but returns only once that fsync is done;
// a launch whose evidence cannot be made durable is refused and leaves
// no container. Dropping create's wait fails the last row: the lock's
// release still waits for the fsync, but its failure refuses nothing.
func TestCreateLaunchDurableBeforeItReturns(t *testing.T) {
	for _, tc := range []launchDurableCase{
		{name: "without canaries"},
		{name: "with canaries", canary: true},
		{name: "the launch's fsync fails, with canaries", canary: true, syncErr: errors.New("EIO")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, b := launchTestRuntime(t, tc.canary)
			var mu sync.Mutex
			launchSynced := false
			defer func(f func(*os.File) error) { syncLog = f }(syncLog)
			syncLog = func(f *os.File) error {
				data, err := os.ReadFile(f.Name())
				if err != nil || !strings.Contains(string(data), `"event":"launch"`) {
					return f.Sync()
				}
				mu.Lock()
				first := !launchSynced
				mu.Unlock()
				if first {
					// The launch's: slow, so a create that does not
					// wait for it returns first.
					time.Sleep(100 * time.Millisecond)
				}
				mu.Lock()
				launchSynced = true
				mu.Unlock()
				if first && tc.syncErr != nil {
					return tc.syncErr // once: the refusal's and the receipt's succeed
				}
				return f.Sync()
			}
			err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, func(s *specs.Spec) {
				s.Linux.MaskedPaths = []string{"/proc/kcore"}
			})})
			mu.Lock()
			synced := launchSynced
			mu.Unlock()
			rec, _ := r.Store.readRecord("c1")
			if tc.syncErr != nil {
				if err == nil || !strings.Contains(err.Error(), "EIO") {
					t.Fatalf("create with the launch's fsync failing: %v, want its error", err)
				}
				if rec != nil || len(b.containers) != 0 {
					t.Fatalf("a create whose launch is not durable left its container (record %v, backend %d)", rec != nil, len(b.containers))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.canary != rec.Canary {
				t.Fatalf("canaries %v, want %v (the fake bundle decides)", rec.Canary, tc.canary)
			}
			if !synced {
				t.Fatal("create returned before its launch's evidence was durable")
			}
			if rec.State != StateLaunchable {
				t.Fatalf("state %s, want Launchable", rec.State)
			}
		})
	}
}

// launchDurableCase is a row of the launch-durability tests: a bundle
// with canaries or without, and the launch's fsync failing or not.
type launchDurableCase struct {
	name    string
	canary  bool
	syncErr error
}

// launchTestRuntime is a core over a fake backend with an audit log, whose
// containers are verified with canaries (that all pass) if canaries is
// set, and without host facts for them otherwise.
func launchTestRuntime(t *testing.T, canaries bool) (*Runtime, *fakeBackend) {
	t.Helper()
	b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
	var facts hooks.Facts = fakeNamespaces{}
	if canaries {
		facts = canaryFacts{}
		b.canary = func(canary.Config) (canary.Report, error) { return canary.Report{}, nil }
	}
	r, err := New(filepath.Join(t.TempDir(), "root"), b, facts, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	r.Store.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	return r, b
}

// canaryFacts are host facts that make a container verified with
// canaries (post-launch facts), and say nothing of its masked paths.
type canaryFacts struct {
	hooks.PostFacts // nil: a call beyond the methods below panics
	ns              fakeNamespaces
}

func (f canaryFacts) Of(pid int, t specs.LinuxNamespaceType) (nsID, error) { return f.ns.Of(pid, t) }
func (f canaryFacts) Host(t specs.LinuxNamespaceType) (nsID, error)        { return f.ns.Host(t) }
func (f canaryFacts) Path(p string) (nsID, error)                          { return f.ns.Path(p) }
func (f canaryFacts) Status(pid int) (hooks.ProcStatus, error)             { return f.ns.Status(pid) }
func (f canaryFacts) IDMap(pid int, w string) ([]hooks.IDMapping, error)   { return f.ns.IDMap(pid, w) }
func (f canaryFacts) InCgroup(d string, pid int) (bool, error)             { return true, nil }
func (f canaryFacts) CgroupFile(string, string) (string, error)            { return "", nil }
func (f canaryFacts) CgroupHas(string, string) (bool, error)               { return true, nil }
func (canaryFacts) ProcStat(int) (hooks.ProcState, error) {
	return hooks.ProcState{State: 'S', Start: 1}, nil
}
func (canaryFacts) Mounts(int) ([]hooks.Mount, error)                { return nil, nil }
func (canaryFacts) Exists(int, string) (bool, error)                 { return false, nil }
func (canaryFacts) NullDevice(int, string) (bool, error)             { return false, nil }
func (canaryFacts) FileDigest(string, string) (string, int, error)   { return "", 0, os.ErrNotExist }
func (canaryFacts) PidsInNamespace(hooks.NamespaceID) ([]int, error) { return nil, nil }
func (canaryFacts) CgroupProcs(string) ([]int, error)                { return nil, nil }

// delete removes the state while the receipt's fsync runs, and does not
// return before it is done; a receipt that cannot be made durable fails
// the delete (125) instead of reporting it clean.
func TestDeleteReceiptDurableBeforeItReturns(t *testing.T) {
	for _, syncErr := range []error{nil, errors.New("EIO")} {
		t.Run(fmt.Sprint(syncErr), func(t *testing.T) {
			b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
			r := newTestRuntime(t, b, fakeNamespaces{})
			r.Store.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
			if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}); err != nil {
				t.Fatal(err)
			}
			if err := r.Start("c1"); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			receiptSynced := false
			defer func(f func(*os.File) error) { syncLog = f }(syncLog)
			syncLog = func(f *os.File) error {
				log, _ := os.ReadFile(r.Store.AuditLog)
				if !strings.Contains(string(log), `"event":"receipt"`) {
					return f.Sync()
				}
				time.Sleep(100 * time.Millisecond)
				mu.Lock()
				receiptSynced = true
				mu.Unlock()
				if syncErr != nil {
					return syncErr
				}
				return f.Sync()
			}
			err := r.Delete("c1", true)
			mu.Lock()
			synced := receiptSynced
			mu.Unlock()
			if !synced {
				t.Fatal("delete returned before the receipt's fsync was done")
			}
			if syncErr == nil && err != nil {
				t.Fatal(err)
			}
			if syncErr != nil && (!errors.Is(err, ErrTeardownIncomplete) || ExitCode(err) != ExitSandbox) {
				t.Fatalf("delete with the receipt's fsync failing = %v, want TeardownIncomplete (125)", err)
			}
		})
	}
}

// Every waiter for a background fsync sees its outcome, not only the
// first: a second wait while it runs must not return early as if it were
// done.
func TestWaitDurableEveryWaiter(t *testing.T) {
	root := t.TempDir()
	s := Store{Root: root, AuditLog: filepath.Join(root, "all.jsonl"), batch: &auditBatch{}}
	release := make(chan struct{})
	defer func(f func(*os.File) error) { syncLog = f }(syncLog)
	syncLog = func(*os.File) error { <-release; return errors.New("EIO") }
	if err := s.auditLaterLocked(AuditEvent{ID: "c1", Event: "launch"}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- s.waitDurable() }()
	}
	select {
	case err := <-errs:
		t.Fatalf("a wait returned (%v) before the fsync ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	for range 2 {
		if err := <-errs; err == nil || !strings.Contains(err.Error(), "EIO") {
			t.Fatalf("waiter got %v, want the fsync's EIO", err)
		}
	}
	if err := s.waitDurable(); err != nil {
		t.Fatalf("after the waits: %v", err)
	}
}
