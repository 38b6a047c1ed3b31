package runtime

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// auditEvents reads an --audit-log file.
func auditEvents(t *testing.T, path string) []AuditEvent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []AuditEvent
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// The fault: the host rebooted under a state root on persistent storage,
// so a record of the last boot is read in this one (here its boot id is
// rewritten, as the reboot would leave it). It must read as
// unknown-after-reboot, OCI stopped with no pid; start and kill must
// refuse (125) without touching the backend's container, whose pid is
// another boot's; delete must remove it without signalling or tearing
// anything down, and its receipt must say so.
func TestRecordFromAnotherBoot(t *testing.T) {
	b := &fakeBackend{initPid: 4242, containers: map[string]*fakeContainer{}}
	r := newTestRuntime(t, b, fakeNamespaces{})
	r.BootID = func() string { return "boot-now" }
	r.Store.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}); err != nil {
		t.Fatal(err)
	}
	rec, err := r.Store.readRecord("c1")
	if err != nil || rec.BootID != "boot-now" {
		t.Fatalf("record after create: %+v, %v; want the boot id recorded", rec, err)
	}
	// The same boot: an ordinary created container.
	if st, err := r.State("c1"); err != nil || st.Status != StatusCreated || st.Pid != 4242 {
		t.Fatalf("state in the same boot: %+v, %v", st, err)
	}
	r.BootID = func() string { return "boot-after" }

	st, err := r.State("c1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != StatusStopped || st.Pid != 0 || st.Vetto.State != StateUnknownAfterReboot || st.Vetto.LastState != StateLaunchable || !strings.Contains(st.Vetto.Reason, "unknown-after-reboot") {
		t.Fatalf("state after a reboot: %+v; want stopped, no pid, UnknownAfterReboot (last Launchable)", st)
	}
	for name, op := range map[string]func() error{
		"start": func() error { return r.Start("c1") },
		"kill":  func() error { return r.Kill("c1", "KILL", true) },
		"pause": func() error { return r.Pause("c1") },
		"events": func() error {
			return r.Events("c1", time.Second, true, func(Event) error { return nil })
		},
	} {
		err := op()
		if !errors.Is(err, ErrUnknownAfterReboot) || ExitCode(err) != ExitSandbox || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s after a reboot: %v (exit %d); want one line, ErrUnknownAfterReboot, 125", name, err, ExitCode(err))
		}
	}
	if c := b.containers["c1"]; c == nil || c.status != StatusCreated {
		t.Fatalf("the backend's container was acted on: %+v", c)
	}
	if err := r.Delete("c1", false); err != nil {
		t.Fatalf("delete after a reboot: %v", err)
	}
	if len(b.destroyed) != 0 || b.containers["c1"].status != StatusCreated {
		t.Fatalf("delete signalled or destroyed through another boot's pid: destroyed %v, status %s", b.destroyed, b.containers["c1"].status)
	}
	if _, err := r.State("c1"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("state after delete: %v", err)
	}
	var receipt, terminated bool
	for _, ev := range auditEvents(t, r.Store.AuditLog) {
		if ev.Event == "receipt" && ev.Receipt != nil && ev.Receipt.Method == ReceiptUnknownAfterReboot && ev.Receipt.Killed == 0 && ev.Receipt.Clean() {
			receipt = true
		}
		if ev.To == StateTerminated || ev.To == StateTerminating {
			terminated = true
		}
	}
	if !receipt || terminated {
		t.Fatalf("audit log: receipt unknown-after-reboot %v, a Terminating/Terminated transition %v; want the receipt and no end anyone saw", receipt, terminated)
	}
}

// A record without a boot id (written before this field existed), or a
// host where the id cannot be read now, is no proof of a reboot: it is
// judged as before, since taking a live container for a dead one would
// leave it running with its state removed.
func TestBootIDUnknownIsNoReboot(t *testing.T) {
	b := &fakeBackend{initPid: 7, containers: map[string]*fakeContainer{}}
	r := newTestRuntime(t, b, fakeNamespaces{})
	r.BootID = func() string { return "" }
	if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}); err != nil {
		t.Fatal(err)
	}
	r.BootID = func() string { return "boot-after" }
	if st, err := r.State("c1"); err != nil || st.Status != StatusCreated || st.Vetto.State != StateLaunchable {
		t.Fatalf("state of a record without a boot id: %+v, %v", st, err)
	}
	rec, _ := r.Store.readRecord("c1")
	rec.BootID = "boot-before"
	if err := r.Store.writeRecordLocked(rec); err != nil {
		t.Fatal(err)
	}
	r.BootID = func() string { return "" }
	if st, err := r.State("c1"); err != nil || st.Status != StatusCreated {
		t.Fatalf("state where the boot id cannot be read: %+v, %v", st, err)
	}
	if err := r.Delete("c1", true); err != nil || len(b.destroyed) != 1 {
		t.Fatalf("delete --force: %v, destroyed %v; want the ordinary teardown", err, b.destroyed)
	}
}
