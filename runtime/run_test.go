package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetto-dev/vetto-runtime/hooks"
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
