package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
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
//
// With a batch (a Store made by New), the events of one command go out
// together: an event that is evidence (sync) writes every event before it
// with it, in one append per log and one fsync; the rest wait for the
// container's lock to be released (lock.unlock), which every command does
// before it ends.
func (s Store) auditLocked(ev AuditEvent, sync bool) error {
	ev.Time = time.Now().UTC()
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode audit event: %w", err)
	}
	line = append(line, '\n')
	if s.batch == nil {
		return s.writeAudit([]pendingLine{{ev.ID, line}}, sync)
	}
	s.batch.mu.Lock()
	s.batch.pending = append(s.batch.pending, pendingLine{ev.ID, line})
	s.batch.mu.Unlock()
	if !sync {
		return nil
	}
	return s.flushAudit(true)
}

// auditLaterLocked is auditLocked(ev, true) with the fsync in the
// background: ev and every event before it are written now, and
// waitDurable returns once they are durable. Whoever acts on ev calls
// waitDurable first; so does the release of the container's lock, so a
// command never ends with its evidence still in flight. run uses it for
// the launch: the fsync then overlaps the start's work up to the moment
// the program may exec, which waits for it. Without a batch it is
// auditLocked.
func (s Store) auditLaterLocked(ev AuditEvent) error {
	if s.batch == nil {
		return s.auditLocked(ev, true)
	}
	if err := s.auditLocked(ev, false); err != nil {
		return err
	}
	s.batch.mu.Lock()
	lines := s.batch.pending
	s.batch.pending = nil
	s.batch.mu.Unlock()
	// An earlier fsync that failed fails this event too, which is still
	// written (only not made durable): no event is dropped.
	prevErr := s.waitDurable()
	if err := s.writeAudit(lines, false); err != nil {
		return errors.Join(prevErr, err)
	}
	if prevErr != nil {
		return prevErr
	}
	var logs []string
	if s.Evidence.Dir != "" && s.Evidence.Fsync {
		logs = append(logs, s.Evidence.LogPath())
	}
	if s.AuditLog != "" {
		logs = append(logs, s.AuditLog)
	}
	d := &durableSync{done: make(chan struct{})}
	s.batch.mu.Lock()
	s.batch.durable = d
	s.batch.mu.Unlock()
	go func() {
		var errs []error
		for _, path := range logs {
			if err := syncPath(path); err != nil {
				errs = append(errs, fmt.Errorf("audit log %s: %w", path, err))
			}
		}
		d.err = errors.Join(errs...)
		close(d.done)
	}()
	return nil
}

// durableSync is an fsync under way: done is closed when it has ended,
// with err its outcome. Every waiter sees the same outcome.
type durableSync struct {
	done chan struct{}
	err  error
}

// waitDurable waits for the fsync auditLaterLocked began, if one is under
// way, and returns its error.
func (s Store) waitDurable() error {
	if s.batch == nil {
		return nil
	}
	s.batch.mu.Lock()
	d := s.batch.durable
	s.batch.mu.Unlock()
	if d == nil {
		return nil
	}
	<-d.done
	s.batch.mu.Lock()
	if s.batch.durable == d {
		s.batch.durable = nil
	}
	s.batch.mu.Unlock()
	return d.err
}

// auditBatch is this process's events not yet written.
type auditBatch struct {
	mu      sync.Mutex
	pending []pendingLine
	// durable is the last fsync auditLaterLocked began, until a wait
	// for it has ended, or nil.
	durable *durableSync
}

type pendingLine struct {
	id   string
	line []byte
}

// flushAudit writes the pending events, fsync'ing the durable logs if
// sync.
func (s Store) flushAudit(sync bool) error {
	if s.batch == nil {
		return nil
	}
	s.batch.mu.Lock()
	lines := s.batch.pending
	s.batch.pending = nil
	s.batch.mu.Unlock()
	if len(lines) == 0 {
		return nil
	}
	return s.writeAudit(lines, sync)
}

// writeAudit appends lines to each container's own log and, all of them,
// to the host-wide log and --audit-log.
func (s Store) writeAudit(lines []pendingLine, sync bool) error {
	var all []byte
	byID := map[string][]byte{}
	var order []string
	for _, l := range lines {
		all = append(all, l.line...)
		if _, ok := byID[l.id]; !ok {
			order = append(order, l.id)
		}
		byID[l.id] = append(byID[l.id], l.line...)
	}
	// The container's own log lives and dies with its state directory (see
	// writeFileAtomic): only the global log is the durable record, synced.
	// A directory a delete removed since has no log to add to.
	for _, id := range order {
		local := filepath.Join(s.dir(id), auditFile)
		if err := appendLine(local, byID[id], false); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("audit log %s: %w", local, err)
		}
	}
	if err := s.Evidence.append(all, sync); err != nil {
		return fmt.Errorf("host-wide audit log %s: %w", s.Evidence.LogPath(), err)
	}
	if s.AuditLog != "" {
		if err := appendLine(s.AuditLog, all, sync); err != nil {
			return fmt.Errorf("audit log %s: %w", s.AuditLog, err)
		}
	}
	return nil
}

// syncLog makes an audit log's appended lines durable; a test counts it.
var syncLog = (*os.File).Sync
