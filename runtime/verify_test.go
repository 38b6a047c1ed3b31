package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

func pass(check string) hooks.Result {
	return hooks.Result{Check: check, Verdict: hooks.Pass, Evidence: hooks.HostFact}
}

func fail(check string) hooks.Result {
	return hooks.Result{Check: check, Verdict: hooks.Fail, Evidence: hooks.HostFact, Expected: "x", Found: "y"}
}

func exitedResult(check string) hooks.Result {
	return hooks.Result{Check: check, Verdict: hooks.Unavailable, Evidence: hooks.HostFact, Found: "pid 1 has exited"}
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
		// exited: the init is gone when the verdicts are judged.
		exited bool
	}{
		{"all pass", LevelStandard, []hooks.Result{pass("P1"), pass("P3/a")}, StateVerifiedRuntime, false, nil, false},
		{"fail at standard", LevelStandard, []hooks.Result{pass("P1"), fail("P3/a")}, StatePostLaunchFailed, true, ErrPostLaunchFailed, false},
		{"fail at strict", LevelStrict, []hooks.Result{fail("P2")}, StatePostLaunchFailed, true, ErrPostLaunchFailed, false},
		{"fail at degraded", LevelDegraded, []hooks.Result{fail("P3/a")}, StateRunning, false, nil, false},
		{"partial at standard", LevelStandard, []hooks.Result{pass("P1"), partial("P3/a")}, StateRunning, false, nil, false},
		{"partial at strict", LevelStrict, []hooks.Result{partial("P3/a")}, StatePostLaunchFailed, true, ErrPostLaunchFailed, false},
		{"nothing ran", LevelStandard, nil, StateRunning, false, nil, false},
		{"exited before verification", LevelStrict, []hooks.Result{pass("P3/a"), exitedResult("P1")}, StateRunning, true, nil, true},
		{"a FAIL of a process that exited", LevelStandard, []hooks.Result{fail("P3/a"), exitedResult("P1")}, StatePostLaunchFailed, true, ErrPostLaunchFailed, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
			r := newTestRuntime(t, b, fakeNamespaces{})
			r.Store.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
			var mu sync.Mutex
			syncs := 0
			count := func() int { mu.Lock(); defer mu.Unlock(); return syncs }
			defer func(f func(*os.File) error) { syncLog = f }(syncLog)
			syncLog = func(f *os.File) error { mu.Lock(); syncs++; mu.Unlock(); return f.Sync() }
			if err := r.Store.createDirAndRecord(t, "c1", tc.level); err != nil {
				t.Fatal(err)
			}
			rec, _ := r.Store.readRecord("c1")
			c := &fakeContainer{b: b, id: "c1", status: StatusRunning}
			if tc.exited {
				c.status = StatusStopped
			}
			err := r.judgeLocked(rec, c, phasePoststart, tc.results, 0)
			// Verdicts are fsync'd before they are acted on — those that
			// all PASS beside the promotion, durable once the command
			// waits (as its lock's release does); only those of a process
			// that had exited, which decide nothing, wait for the next
			// durable event.
			if werr := r.Store.waitDurable(); werr != nil {
				t.Fatal(werr)
			}
			if wantSync := !(tc.exited && tc.wantErr == nil); (count() > 0) != wantSync {
				t.Errorf("audit log fsync'd %d times, want synced = %v", count(), wantSync)
			}
			// Unsynced, they still go out when the lock is let go.
			if err := r.Store.flushAudit(false); err != nil {
				t.Fatal(err)
			}
			if log, _ := os.ReadFile(r.Store.AuditLog); !strings.Contains(string(log), `"event":"verdicts"`) {
				t.Errorf("verdicts not in the audit log: %q", log)
			}
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

// --no-verify is a degradation like any other (13.3): refused at strict,
// at standard unless --allow-degraded=verify accepts it, recorded at
// degraded, and refused by a floor that forbids it at every level.
func TestNoVerify(t *testing.T) {
	floor, err := ParseConfig("runtime.toml", []byte("[forbid]\nno_verify = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	allow := map[launch.Feature]bool{FeatureVerify: true}
	tests := []struct {
		name   string
		sec    Security
		config *Config
		kind   error // nil: created, with the degradation recorded
	}{
		{"strict", Security{Level: LevelStrict, LevelSet: true, NoVerify: true, AllowDegraded: allow}, nil, ErrDegradedRefused},
		{"standard without acceptance", Security{NoVerify: true}, nil, ErrDegradedRefused},
		{"standard accepted", Security{NoVerify: true, AllowDegraded: allow}, nil, nil},
		{"degraded", Security{Level: LevelDegraded, LevelSet: true, NoVerify: true}, nil, nil},
		{"floor forbids it at degraded", Security{Level: LevelDegraded, LevelSet: true, NoVerify: true}, floor, ErrFloorForbids},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
			r := newTestRuntime(t, b, fakeNamespaces{})
			r.Config = tt.config
			id := fmt.Sprintf("c%d", i)
			err := r.Create(CreateOptions{ID: id, Bundle: writeBundle(t, nil), Security: tt.sec})
			if tt.kind != nil {
				if !errors.Is(err, tt.kind) {
					t.Fatalf("create: %v, want %v", err, tt.kind)
				}
				if _, err := os.Stat(r.Store.dir(id)); !os.IsNotExist(err) {
					t.Fatalf("refused create left its state dir: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st, _ := r.State(id)
			if !slices.Contains(st.Vetto.Degraded, NoVerifyReason) {
				t.Fatalf("degraded %v, want %q", st.Vetto.Degraded, NoVerifyReason)
			}
		})
	}
}

// 13.6: a platform with no host facts cannot verify anything, so a launch
// there is an accepted verify degradation or nothing: refused at standard
// unless accepted, never a silent pass; at degraded it runs, marked
// unverified, and start never calls it VerifiedRuntime.
func TestNoHostFacts(t *testing.T) {
	b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
	r, err := New(filepath.Join(t.TempDir(), "root"), b, nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Create(CreateOptions{ID: "std", Bundle: writeBundle(t, nil)}); !errors.Is(err, ErrDegradedRefused) {
		t.Fatalf("create without host facts at standard: %v, want refused", err)
	}
	if err := r.Create(CreateOptions{ID: "deg", Bundle: writeBundle(t, nil), Security: Security{Level: LevelDegraded, LevelSet: true}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Start("deg"); err != nil {
		t.Fatal(err)
	}
	st, _ := r.State("deg")
	if st.Vetto.State == StateVerifiedRuntime || st.Vetto.Verification == string(hooks.Pass) {
		t.Fatalf("an unverifiable container reads as verified: %+v", st.Vetto)
	}
	if !strings.Contains(strings.Join(st.Vetto.Degraded, ";"), "no host facts") {
		t.Fatalf("degraded %v, want the missing facts named", st.Vetto.Degraded)
	}
}

// The containers that joined a container's pid namespace are the other
// records of its root whose baseline names that namespace: not itself,
// not one in another namespace, not a record without a baseline (a
// create that got no further) or one that cannot be read.
func TestPidNamespaceSharers(t *testing.T) {
	r := newTestRuntime(t, &fakeBackend{containers: map[string]*fakeContainer{}}, fakeNamespaces{})
	own, other := hooks.NamespaceID{Dev: 4, Ino: 1}, hooks.NamespaceID{Dev: 4, Ino: 2}
	put := func(id string, b *hooks.Baseline) {
		t.Helper()
		data, err := json.Marshal(&Record{ID: id, State: StateRunning, Baseline: b})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(r.Store.dir(id), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.Store.dir(id), recordFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := func(ns hooks.NamespaceID, cg string) *hooks.Baseline {
		return &hooks.Baseline{Namespaces: map[string]hooks.NamespaceID{"pid": ns}, Cgroups: map[string]string{"": cg}}
	}
	put("target", base(own, "/cg/target"))
	put("joiner", base(own, "/cg/joiner"))
	put("debug", base(own, "/cg/debug"))
	put("elsewhere", base(other, "/cg/elsewhere"))
	put("unlaunched", nil)
	if err := os.MkdirAll(r.Store.dir("broken"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Store.dir("broken"), recordFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	target, err := r.Store.readRecord("target")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cg := range r.pidNamespaceSharers(target) {
		got = append(got, cg[""])
	}
	slices.Sort(got)
	if want := []string{"/cg/debug", "/cg/joiner"}; !slices.Equal(got, want) {
		t.Fatalf("sharers of target: %v, want %v", got, want)
	}
	if got := r.pidNamespaceSharers(&Record{ID: "x"}); got != nil {
		t.Fatalf("sharers of a container without a baseline: %v", got)
	}
}
