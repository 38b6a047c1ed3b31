package runtime

import (
	"encoding/json"
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
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// A foreground run whose init exits before its post-launch checks (a short
// job) is torn down under the lock start took: the init's exit status
// comes back, the state goes, the audit log has the verdicts, the
// Terminating transition and the receipt. The EXITED verdicts are not
// lost with their own record: a teardown that leaves something keeps the
// state, and its record says EXITED.
func TestForegroundRunOfAnInitThatExited(t *testing.T) {
	for _, tc := range []struct {
		name string
		left []int // pids the teardown reports as surviving
	}{
		{name: "clean teardown"},
		{name: "teardown incomplete", left: []int{42}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fg := &fakeForeground{status: 3}
			b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}, fg: fg, teardownLeft: tc.left}
			// The program exits as soon as it execs.
			b.execs = func() { b.containers["c1"].status = StatusStopped }
			r := newTestRuntime(t, b, fakeNamespaces{})
			r.Store.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
			status, err := r.Run(RunOptions{CreateOptions: CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}})
			if !fg.closed {
				t.Errorf("the foreground was not closed")
			}
			log, _ := os.ReadFile(r.Store.AuditLog)
			for _, want := range []string{`"event":"verdicts"`, `"to":"Terminating"`, `"event":"receipt"`} {
				if !strings.Contains(string(log), want) {
					t.Errorf("audit log has no %s: %s", want, log)
				}
			}
			rec, readErr := r.Store.readRecord("c1")
			if len(tc.left) == 0 {
				if err != nil || status != 3 {
					t.Fatalf("run = %d, %v; want the init's 3", status, err)
				}
				if !errors.Is(readErr, ErrNotExist) {
					t.Fatalf("state left after a clean run: %+v, %v", rec, readErr)
				}
				return
			}
			if !errors.Is(err, ErrTeardownIncomplete) || ExitCode(err) != ExitSandbox {
				t.Fatalf("run with a teardown that left pid 42: %d, %v; want TeardownIncomplete (125)", status, err)
			}
			if readErr != nil {
				t.Fatalf("state of an incomplete teardown: %v", readErr)
			}
			if rec.State != StateTerminating || rec.Verification != "EXITED" || rec.Receipt == nil {
				t.Fatalf("kept record: state %s, verification %q, receipt %v; want Terminating, EXITED and the receipt", rec.State, rec.Verification, rec.Receipt)
			}
		})
	}
}

// The EXITED verdicts of a start whose caller tears the container down
// next, under the same lock, are not written in a record of their own; any
// other start's are (state and ps read them).
func TestExitedVerdictsRecordedUnlessTheTeardownFollows(t *testing.T) {
	for _, teardownNext := range []bool{false, true} {
		b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
		r := newTestRuntime(t, b, fakeNamespaces{})
		if err := r.Store.createDirAndRecord(t, "c1", LevelStandard); err != nil {
			t.Fatal(err)
		}
		rec, _ := r.Store.readRecord("c1")
		rec.teardownOnExit = teardownNext
		c := &fakeContainer{b: b, id: "c1", status: StatusStopped}
		if err := r.judgeLocked(rec, c, phasePoststart, []hooks.Result{exitedResult("P1")}, 0); err != nil {
			t.Fatal(err)
		}
		if rec.Verification != "EXITED" {
			t.Fatalf("verification %q, want EXITED", rec.Verification)
		}
		got, _ := r.Store.readRecord("c1")
		if written := got.Verification == "EXITED"; written == teardownNext {
			t.Errorf("teardown next %v: EXITED record written %v", teardownNext, written)
		}
	}
}

// Verdicts that all PASS are fsync'd beside the promotion, and start does
// not return before they are durable: verdicts that cannot be made so
// fail the start (125) and stop the container, as when their fsync was
// awaited before the promotion.
func TestVerdictsDurableBeforeStartReturns(t *testing.T) {
	for _, failVerdicts := range []bool{false, true} {
		p := &fakePlatform{fakeBackend: &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}},
			gaps: launch.Platform{Name: "fake", Verifies: true}, pre: []hooks.Result{pass("seatbelt/sandboxed")}, post: []hooks.Result{pass("seatbelt/sandboxed")}}
		r := newPlatformRuntime(t, p)
		if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		began, done := 0, 0
		defer func(f func(*os.File) error) { syncLog = f }(syncLog)
		syncLog = func(f *os.File) error {
			mu.Lock()
			began++
			mu.Unlock()
			time.Sleep(50 * time.Millisecond) // slow: a start that does not wait returns first
			mu.Lock()
			done++
			mu.Unlock()
			if failVerdicts {
				return errors.New("EIO")
			}
			return f.Sync()
		}
		err := r.Start("c1")
		mu.Lock()
		b, d := began, done
		mu.Unlock()
		if b == 0 {
			t.Fatalf("the verdicts were never fsync'd")
		}
		if d != b {
			t.Fatalf("start returned with %d of %d fsyncs of its verdicts under way", b-d, b)
		}
		if failVerdicts {
			if err == nil || !strings.Contains(err.Error(), "not durable") || ExitCode(err) != ExitSandbox {
				t.Fatalf("start with the verdicts' fsync failing: %v, want a 125 naming it", err)
			}
			if c := p.containers["c1"]; c.status != StatusStopped {
				t.Fatalf("container left %s after its verdicts could not be made durable", c.status)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec, _ := r.Store.readRecord("c1"); rec.State != StateVerifiedRuntime {
			t.Fatalf("state %s, want VerifiedRuntime", rec.State)
		}
	}
}

// A run hands the spec its create froze to its start and teardown as the
// object itself, not parsed again from the frozen bytes: that is sound
// only while nothing on the way changes it. After whole runs — a job that
// is gone by the end of start and one still running then — the object
// the backend was given must still hash to the spec the launch recorded.
func TestRunLeavesTheFrozenSpecUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name     string
		exitsNow bool
	}{
		{name: "exits before its post-exec checks", exitsNow: true},
		{name: "still running after start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fg := &fakeForeground{}
			b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}, fg: fg}
			if tc.exitsNow {
				b.execs = func() { b.containers["c1"].status = StatusStopped }
			}
			r := newTestRuntime(t, b, fakeNamespaces{})
			r.Store.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
			bundle := writeBundle(t, func(s *specs.Spec) {
				s.Hooks = &specs.Hooks{Poststop: []specs.Hook{{Path: "/bin/true"}}}
				s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}}
			})
			if _, err := r.Run(RunOptions{CreateOptions: CreateOptions{ID: "c1", Bundle: bundle}}); err != nil {
				t.Fatalf("run: %v", err)
			}
			if b.spec == nil {
				t.Fatal("the backend was given no spec")
			}
			data, err := json.Marshal(b.spec)
			if err != nil {
				t.Fatal(err)
			}
			now, err := specHash(data)
			if err != nil {
				t.Fatal(err)
			}
			launched := launchEventSpec(t, r.Store.AuditLog)
			if now != launched {
				t.Fatalf("the frozen spec changed during the run: it hashes to %s now, the launch recorded %s", shortHash(now), shortHash(launched))
			}
		})
	}
}

// launchEventSpec is the spec hash of the launch event in the audit log.
func launchEventSpec(t *testing.T, log string) string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if ev.Event == "launch" {
			return ev.Spec
		}
	}
	t.Fatalf("no launch event in %s", data)
	return ""
}

// A foreground run's promotion to VerifiedRuntime is not written at once
// (its teardown may follow under the same lock), but once the run lets
// the lock go — other commands may then read the container — the record
// says VerifiedRuntime and the verdicts it was promoted on are durable;
// verdicts that cannot be made so stop the container and fail the run
// (125). Leaving out the write or the fsync in verdictsDurableLocked
// fails a row.
func TestRunPromotionWrittenAndDurableBeforeTheLockIsLetGo(t *testing.T) {
	for _, failSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("fsync fails %v", failSync), func(t *testing.T) {
			fg := &fakeForeground{} // a job that runs on past the short wait
			r := verifiedRunRuntime(t, fg)
			// durable is how much of the audit log the last fsync covered.
			var durable int64
			defer func(f func(*os.File) error) { syncLog = f }(syncLog)
			syncLog = func(f *os.File) error {
				if f.Name() != r.Store.AuditLog {
					return f.Sync()
				}
				data, err := os.ReadFile(f.Name())
				if err != nil {
					return err
				}
				// Only the verdicts' fsync fails: the launch's before them
				// is another test's matter.
				if failSync && strings.Contains(string(data), `"reason":"poststart"`) {
					return errors.New("EIO")
				}
				durable = int64(len(data))
				return f.Sync()
			}
			waited := false
			fg.onWait = func() {
				waited = true
				rec, err := r.Store.readRecord("c1")
				if err != nil {
					t.Fatalf("the run let the lock go with no record: %v", err)
				}
				if rec.State != StateVerifiedRuntime {
					t.Errorf("the run let the lock go with the record at %s, want VerifiedRuntime", rec.State)
				}
				data, err := os.ReadFile(r.Store.AuditLog)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(data[:durable]), `"reason":"poststart"`) {
					t.Errorf("the run let the lock go before the poststart verdicts were fsync'd (%d of %d bytes durable)", durable, len(data))
				}
			}
			bundle := writeBundle(t, nil)
			_, err := r.Run(RunOptions{CreateOptions: CreateOptions{ID: "c1", Bundle: bundle}})
			if failSync {
				if err == nil || ExitCode(err) != ExitSandbox {
					t.Fatalf("run whose evidence cannot be made durable: %v, want exit 125", err)
				}
				if waited {
					t.Fatal("the run let the lock go and waited for a process whose evidence is not durable")
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if !waited {
				t.Fatal("the run never waited for its process")
			}
		})
	}
}

// verifiedRunRuntime is a core over a fake platform whose containers pass
// every check, so that a run's start promotes them, and whose foreground
// runs are fg.
func verifiedRunRuntime(t *testing.T, fg *fakeForeground) *Runtime {
	t.Helper()
	p := &fakePlatform{fakeBackend: &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}, fg: fg},
		gaps: launch.Platform{Name: "fake", Verifies: true}, pre: []hooks.Result{pass("seatbelt/sandboxed")}, post: []hooks.Result{pass("seatbelt/sandboxed")}}
	return newPlatformRuntime(t, p)
}

// A job that exits within a foreground run's short wait at the end of its
// start is torn down under the lock its create took: the run never writes
// its record at VerifiedRuntime, and never lets the lock go to wait for
// it. Without the wait (awaitExit) the record is written first.
func TestRunTearsDownAJobDoneWithinTheShortWait(t *testing.T) {
	fg := &fakeForeground{exitsSoon: true}
	r := verifiedRunRuntime(t, fg)
	waited := false
	fg.onWait = func() {
		waited = true
		rec, err := r.Store.readRecord("c1")
		if err != nil {
			t.Fatalf("no record as the run waits: %v", err)
		}
		if rec.State == StateVerifiedRuntime {
			t.Errorf("the record of a job done within the short wait was written at %s", rec.State)
		}
	}
	if _, err := r.Run(RunOptions{CreateOptions: CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}}); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !waited {
		t.Fatal("the run never waited for its process")
	}
	if _, err := r.Store.readRecord("c1"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("the run left its state: %v", err)
	}
}
