package runtime

import (
	"errors"
	"os"
	"testing"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

func pass(check string) hooks.Result {
	return hooks.Result{Check: check, Verdict: hooks.Pass, Evidence: hooks.HostFact}
}

func fail(check string) hooks.Result {
	return hooks.Result{Check: check, Verdict: hooks.Fail, Evidence: hooks.HostFact, Expected: "x", Found: "y"}
}

func partial(check string) hooks.Result {
	return hooks.Result{Check: check, Verdict: hooks.Partial, Evidence: hooks.ContainerReport}
}

// The verdicts of poststart decide the state: only all-PASS reaches
// VerifiedRuntime; a FAIL kills at standard and strict (exit 125) and is
// recorded at degraded; an inconclusive run is never VerifiedRuntime, and
// at strict is a failure. Dropping the kill, or promoting on anything but
// all-PASS, fails a row.
func TestPostLaunchVerdictsDriveState(t *testing.T) {
	for _, tc := range []struct {
		name       string
		level      Level
		results    []hooks.Result
		wantState  State
		wantKilled bool
		wantErr    error
	}{
		{"all pass", LevelStandard, []hooks.Result{pass("P1"), pass("P3/a")}, StateVerifiedRuntime, false, nil},
		{"fail at standard", LevelStandard, []hooks.Result{pass("P1"), fail("P3/a")}, StatePostLaunchFailed, true, ErrPostLaunchFailed},
		{"fail at strict", LevelStrict, []hooks.Result{fail("P2")}, StatePostLaunchFailed, true, ErrPostLaunchFailed},
		{"fail at degraded", LevelDegraded, []hooks.Result{fail("P3/a")}, StateRunning, false, nil},
		{"partial at standard", LevelStandard, []hooks.Result{pass("P1"), partial("P3/a")}, StateRunning, false, nil},
		{"partial at strict", LevelStrict, []hooks.Result{partial("P3/a")}, StatePostLaunchFailed, true, ErrPostLaunchFailed},
		{"nothing ran", LevelStandard, nil, StateRunning, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
			r := newTestRuntime(t, b, fakeNamespaces{})
			if err := r.Store.createDirAndRecord(t, "c1", tc.level); err != nil {
				t.Fatal(err)
			}
			rec, _ := r.Store.readRecord("c1")
			c := &fakeContainer{b: b, id: "c1", status: StatusRunning}
			err := r.judgeLocked(rec, c, phasePoststart, tc.results, 0)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && (!errors.Is(err, tc.wantErr) || ExitCode(err) != ExitSandbox) {
				t.Fatalf("judge = %v, want %v (exit 125)", err, tc.wantErr)
			}
			got, _ := r.Store.readRecord("c1")
			if got.State != tc.wantState {
				t.Errorf("state %s, want %s", got.State, tc.wantState)
			}
			if killed := c.status == StatusStopped; killed != tc.wantKilled {
				t.Errorf("killed %v, want %v", killed, tc.wantKilled)
			}
			if tc.level == LevelDegraded && len(got.Degraded) == 0 {
				t.Errorf("degraded FAIL not recorded: %+v", got)
			}
		})
	}
}

// createDirAndRecord makes a Running container's state directory.
func (s Store) createDirAndRecord(t *testing.T, id string, level Level) error {
	t.Helper()
	l, err := s.createDirLocked(id)
	if err != nil {
		return err
	}
	defer l.unlock()
	return s.writeRecordLocked(&Record{ID: id, State: StateRunning, Level: level})
}

// A teardown that leaves processes is never reported clean: delete fails
// with TeardownIncomplete (125), the state stays with the receipt, and a
// later delete --force that succeeds removes it.
func TestDeleteTeardownIncomplete(t *testing.T) {
	b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
	r := newTestRuntime(t, b, fakeNamespaces{})
	if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}); err != nil {
		t.Fatal(err)
	}
	b.teardownLeft = []int{4242}
	err := r.Delete("c1", true)
	if !errors.Is(err, ErrTeardownIncomplete) || ExitCode(err) != ExitSandbox {
		t.Fatalf("delete = %v, want TeardownIncomplete (125)", err)
	}
	st, err := r.State("c1")
	if err != nil || st.Vetto.Receipt == nil || len(st.Vetto.Receipt.Remaining) != 1 || st.Vetto.Receipt.Clean() {
		t.Fatalf("state after incomplete teardown: %+v, %v", st, err)
	}
	b.teardownLeft = nil
	if err := r.Delete("c1", true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Store.dir("c1")); !os.IsNotExist(err) {
		t.Fatalf("state dir after clean delete: %v", err)
	}
}

// --no-verify is refused at strict and recorded as a degradation elsewhere.
func TestNoVerify(t *testing.T) {
	b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
	r := newTestRuntime(t, b, fakeNamespaces{})
	err := r.Create(CreateOptions{ID: "s", Bundle: writeBundle(t, nil), Security: Security{Level: LevelStrict, LevelSet: true, NoVerify: true}})
	if !errors.Is(err, ErrDegradedRefused) {
		t.Fatalf("strict --no-verify: %v", err)
	}
	if err := r.Create(CreateOptions{ID: "d", Bundle: writeBundle(t, nil), Security: Security{NoVerify: true}}); err != nil {
		t.Fatal(err)
	}
	st, _ := r.State("d")
	if len(st.Vetto.Degraded) == 0 || st.Vetto.Degraded[len(st.Vetto.Degraded)-1] != NoVerifyReason {
		t.Fatalf("degraded %v, want %q", st.Vetto.Degraded, NoVerifyReason)
	}
}
