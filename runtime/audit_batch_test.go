package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
