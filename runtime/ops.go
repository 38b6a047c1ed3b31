package runtime

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/runtime/launch"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// Processes lists the host pids of the container's processes.
func (r *Runtime) Processes(id string) ([]int, error) {
	l, _, c, err := r.loadLocked(id)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	if c == nil {
		return nil, fmt.Errorf("ps %q: %w", id, ErrNotRunning)
	}
	pids, err := c.Processes()
	if err != nil {
		return nil, fmt.Errorf("ps %q: %w", id, err)
	}
	return pids, nil
}

// Pause freezes every process of the container.
func (r *Runtime) Pause(id string) error {
	return r.withContainer(id, "pause", func(c Container) error { return c.Pause() })
}

// Resume thaws a paused container.
func (r *Runtime) Resume(id string) error {
	return r.withContainer(id, "resume", func(c Container) error { return c.Resume() })
}

// Update changes the resource limits of a created, running or paused
// container. The launch evaluator decides it first (an update must not
// remove a limit the level requires: launch.Update); the frozen spec stays
// what was verified at launch, the change is recorded in the record (what
// verify's P7 reads back) and the audit log. allow is the update's own
// --allow-degraded.
func (r *Runtime) Update(id string, res *specs.LinuxResources, allow map[launch.Feature]bool) error {
	l, rec, c, err := r.loadLocked(id)
	if err != nil {
		return err
	}
	defer l.unlock()
	if c == nil {
		return fmt.Errorf("update %q: %w", id, ErrNotRunning)
	}
	st, err := c.Status()
	if err != nil {
		return fmt.Errorf("update %q: %w", id, err)
	}
	if st == StatusStopped {
		return Errorf(ErrWrongState, "cannot update a stopped container")
	}
	for _, limit := range []func(*specs.LinuxResources) (*int64, error){spec.MemoryLimit, spec.PidsLimit} {
		if _, err := limit(res); err != nil {
			return Errorf(ErrInvalidInput, "update %q: %w", id, err)
		}
	}
	d, next := launch.Update(launch.UpdateRequest{Level: rec.Level, Allow: allow, Current: rec.Limits, New: res}, r.Config.floor())
	if !d.OK() {
		return fmt.Errorf("update %q: %w", id, refusal(rec.Level, d.Violations))
	}
	if err := c.Update(res); err != nil {
		return fmt.Errorf("update %q: %w", id, err)
	}
	rec.Limits = next
	for _, g := range d.DegradedStrings() {
		if !slices.Contains(rec.Degraded, g) {
			rec.Degraded = append(rec.Degraded, g)
		}
		r.Warnf("degraded: update of %q: %s", id, g)
	}
	if err := r.Store.writeRecordLocked(rec); err != nil {
		return err
	}
	reason := fmt.Sprintf("%+v", describeResources(res))
	if len(d.Degraded) > 0 {
		reason += " degraded: " + strings.Join(d.DegradedStrings(), "; ")
	}
	return r.Store.auditLocked(AuditEvent{ID: id, Spec: rec.SpecHash, Level: rec.Level.String(), Event: "update", Reason: reason}, true)
}

func describeResources(r *specs.LinuxResources) map[string]any {
	out := map[string]any{}
	if r.Memory != nil && r.Memory.Limit != nil {
		out["memory"] = *r.Memory.Limit
	}
	if r.Pids != nil && r.Pids.Limit != nil {
		out["pids"] = *r.Pids.Limit
	}
	if len(r.Unified) > 0 {
		out["unified"] = r.Unified
	}
	if r.CPU != nil {
		if r.CPU.Quota != nil {
			out["cpu-quota"] = *r.CPU.Quota
		}
		if r.CPU.Shares != nil {
			out["cpu-shares"] = *r.CPU.Shares
		}
	}
	return out
}

func (r *Runtime) withContainer(id, op string, f func(Container) error) error {
	l, _, c, err := r.loadLocked(id)
	if err != nil {
		return err
	}
	defer l.unlock()
	if c == nil {
		return fmt.Errorf("%s %q: %w", op, id, ErrNotRunning)
	}
	if err := f(c); err != nil {
		return fmt.Errorf("%s %q: %w", op, id, err)
	}
	return nil
}

// Event is one line of `events`, in runc's shape.
type Event struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Data any    `json:"data,omitempty"`
}

// Events emits the container's stats: once with stats, else every interval
// until the container stops, with an "oom" event each time it hits its
// memory limit. It reads without the container's lock, as state does.
func (r *Runtime) Events(id string, interval time.Duration, once bool, emit func(Event) error) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	rec, err := r.Store.readRecord(id)
	if err != nil {
		return err
	}
	if r.fromAnotherBoot(rec) {
		// Its cgroups and pid are another boot's: stats would be someone
		// else's.
		return r.errUnknownAfterReboot(rec)
	}
	c, err := r.Backend.Load(r.Store.BackendDir(id), id)
	if err != nil {
		return fmt.Errorf("events %q: %w", id, err)
	}
	if st, err := c.Status(); err != nil || st == StatusStopped {
		return fmt.Errorf("events %q: %w", id, ErrNotRunning)
	}
	stats := func() error {
		s, err := c.Stats()
		if err != nil {
			return fmt.Errorf("events %q: %w", id, err)
		}
		return emit(Event{Type: "stats", ID: id, Data: s})
	}
	if once {
		return stats()
	}
	if interval <= 0 {
		return Errorf(ErrInvalidInput, "events: --interval must be positive")
	}
	oom, err := c.NotifyOOM()
	if err != nil {
		return fmt.Errorf("events %q: %w", id, err)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case _, ok := <-oom:
			if !ok {
				oom = nil // the container's cgroup is gone; the ticker notices
				continue
			}
			if err := emit(Event{Type: "oom", ID: id}); err != nil {
				return err
			}
		case <-tick.C:
			st, err := c.Status()
			if err != nil || st == StatusStopped {
				return nil
			}
			if err := stats(); err != nil {
				if errors.Is(err, ErrNotExist) {
					return nil
				}
				return err
			}
		}
	}
}
