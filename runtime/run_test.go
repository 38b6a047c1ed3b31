package runtime

import (
	"encoding/json"
	"errors"
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
