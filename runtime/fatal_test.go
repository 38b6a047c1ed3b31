package runtime

import (
	"errors"
	"path/filepath"
	"testing"
)

// The fatal states a create reaches, each from the failure that leads
// there, with the kind the caller sees (exit 125), the transition in the
// audit log (the state directory goes with the failed create, the
// evidence does not), and nothing left behind. docs/design-trace.md names
// this test for them.
func TestFatalStatesOfCreate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		createErr error
		sameNS    bool
		kind      error
		from, to  State
	}{
		{"backend has no sandbox", Errorf(ErrBackendUnavailable, "no sandbox-exec"), false, ErrBackendUnavailable, StateCompiled, StateBackendUnavailable},
		{"backend cannot build it", errors.New("clone: resource temporarily unavailable"), false, ErrSpawnFailed, StateCompiled, StateSpawnFailed},
		{"init in the host's namespaces", nil, true, ErrPreLaunchFailed, StateConstructed, StatePreLaunchFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{initPid: 1, createErr: tc.createErr, containers: map[string]*fakeContainer{}}
			r := newTestRuntime(t, b, fakeNamespaces{same: tc.sameNS})
			r.Store.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
			err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)})
			if !errors.Is(err, tc.kind) || ExitCode(err) != ExitSandbox {
				t.Fatalf("Create = %v (exit %d), want %v, exit 125", err, ExitCode(err), tc.kind)
			}
			var moved bool
			for _, ev := range auditEvents(t, r.Store.AuditLog) {
				if ev.Event == "transition" && ev.From == tc.from && ev.To == tc.to {
					moved = true
				}
			}
			if !moved {
				t.Fatalf("no %s -> %s transition in the audit log", tc.from, tc.to)
			}
			if ids, _ := r.Store.ids(); len(ids) != 0 {
				t.Fatalf("state left: %v", ids)
			}
		})
	}
}
