package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

const auditFile = "audit.jsonl"

// AuditEvent is one line of the audit log (docs/verification.md). The log only
// records; nothing in it changes what is enforced.
type AuditEvent struct {
	Time    time.Time      `json:"time"`
	ID      string         `json:"id"`
	Spec    string         `json:"spec,omitempty"` // sha256 of the frozen spec
	Level   string         `json:"level,omitempty"`
	Event   string         `json:"event"` // transition, verdicts, launch, refused, warning, receipt, exec, update, monitor
	From    State          `json:"from,omitempty"`
	To      State          `json:"to,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Results []hooks.Result `json:"results,omitempty"`
	Receipt *hooks.Receipt `json:"receipt,omitempty"`
	// Duration is how long the verification behind a verdicts event took.
	Duration time.Duration `json:"duration,omitempty"`
	// Exit is the exit status a refused launch gave its caller.
	Exit int `json:"exit,omitempty"`
	// Bundle is the bundle a launch came from (launch and refused events).
	Bundle string `json:"bundle,omitempty"`
}

// auditLocked appends ev to the container's own log, to the host-wide log
// (Evidence) and, if set, to --audit-log; in the last two verdicts,
// launches, refusals, receipts and fatal transitions are fsync'd: they are
// the evidence. A failure to audit is reported, never silently dropped.
func (s Store) auditLocked(ev AuditEvent, sync bool) error {
	ev.Time = time.Now().UTC()
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode audit event: %w", err)
	}
	line = append(line, '\n')
	// The container's own log lives and dies with its state directory (see
	// writeFileAtomic): only the global log is the durable record, synced.
	local := filepath.Join(s.dir(ev.ID), auditFile)
	if err := appendLine(local, line, false); err != nil {
		return fmt.Errorf("audit log %s: %w", local, err)
	}
	if err := s.Evidence.append(line, sync); err != nil {
		return fmt.Errorf("host-wide audit log %s: %w", s.Evidence.LogPath(), err)
	}
	if s.AuditLog != "" {
		if err := appendLine(s.AuditLog, line, sync); err != nil {
			return fmt.Errorf("audit log %s: %w", s.AuditLog, err)
		}
	}
	return nil
}

func appendLine(path string, line []byte, sync bool) error {
	// Never through a symlink planted at the log's name.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	// One write(2) of a whole line with O_APPEND: concurrent writers'
	// lines never interleave.
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
