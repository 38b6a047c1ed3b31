package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// The monitor's period once a container has settled, and the bounds
// [monitor] interval may set.
const (
	DefaultMonitorInterval = 5 * time.Second
	MinMonitorInterval     = 100 * time.Millisecond
	MaxMonitorInterval     = 10 * time.Minute
)

// monitorFirst is the monitor's first period: it looks soon after start,
// then doubles its period up to the interval.
const monitorFirst = 100 * time.Millisecond

// phaseMonitor is the monitor's verification phase.
const phaseMonitor = "monitor"

// MonitorState is the record of a container's monitor: which process it
// is, and what it did.
type MonitorState struct {
	Pid int `json:"pid"`
	// StartTime is the monitor's start time in clock ticks (proc(5)
	// stat field 22): with Pid, it names the process, not a reuse.
	StartTime uint64 `json:"startTime"`
	Rounds    int    `json:"rounds"`
	Kills     int    `json:"kills"`
	// Last is the outcome of the last round that did not pass, "" while
	// every round passed.
	Last string `json:"last,omitempty"`
}

// Watcher tells the monitor that something worth a round happened before
// the next one is due: a cgroup event (a process forked or left, a limit
// hit), a mount changed in the container.
type Watcher interface {
	// Wait returns true on an event, false when timeout passed.
	Wait(timeout time.Duration) bool
	Close()
}

// WatchingContainer is a container whose backend can watch it.
type WatchingContainer interface {
	Watch() (Watcher, error)
}

// Monitor is `vetto-runtime monitor <id>`: it lives as long as container
// id, running P1, P2, P4, P6 and P7 (hooks.OnDemand) on a timer — soon after
// start, then every interval — and whenever the container's cgroups or
// mounts report a change. A FAIL kills the container at standard and
// strict (as verify does), and is recorded at degraded; the monitor then
// stops. It returns when the container is gone, stopped, or killed.
// spawned is a monitor that start (or a foreground run) spawned: it
// watches only while the container's record names it as the monitor, so
// one whose start failed, or that a later start replaced, leaves.
func (r *Runtime) Monitor(id string, interval time.Duration, spawned bool) error {
	var w Watcher
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	// Begun at create, the monitor waits for the start: its record's
	// write, watched from before the first look, wakes it. Without a
	// watch it looks every monitorFirst until then.
	rw, _ := r.Store.watchRecord(id)
	defer func() {
		if rw != nil {
			rw.Close()
		}
	}()
	first := min(monitorFirst, interval)
	period, started := first, false
	for {
		if !started && rw != nil && r.beforeStart(id) && rw.Wait(interval) {
			// The record changed (its create went on, or the start
			// ended): look at it again. The lock is left alone until
			// the start is over, so neither create nor start ever
			// waits for a look. A wait that timed out looks under the
			// lock, which also sees an init that died meanwhile.
			continue
		}
		done, waiting, c, err := r.monitorRound(id, spawned)
		if err != nil || done {
			return err
		}
		started = started || (!waiting && c != nil)
		if !started {
			// Not started yet, or its create or start holds the lock:
			// the first round comes soon after the start.
			if waiting && rw != nil {
				rw.Wait(interval)
			} else {
				time.Sleep(first)
			}
			continue
		}
		if rw != nil {
			rw.Close() // from here on the rounds write the record
			rw = nil
		}
		if w == nil {
			if wc, ok := c.(WatchingContainer); ok {
				w, _ = wc.Watch() // without one the timer still runs
			}
		}
		if w != nil {
			if w.Wait(period) {
				// Let a burst of events settle into one round.
				time.Sleep(20 * time.Millisecond)
			}
		} else {
			time.Sleep(period)
		}
		period = min(2*period, interval)
	}
}

// beforeStart reads container id's record without its lock (a record is
// replaced whole, never seen half-written) and says it is not started.
func (r *Runtime) beforeStart(id string) bool {
	rec, err := r.Store.readRecord(id)
	return err == nil && rec.State.BeforeStart()
}

// monitorRound is one round. The container's lock is held to read its
// record and at the end to judge, not while the host facts are read (a
// round under a slow guest's emulation has taken over a second, and every
// start, state or delete of the container waited for it). A record that
// changed meanwhile — a start, an update, a delete began — makes the
// round's facts stale: they are dropped, and the next round looks again.
// A container whose lock is busy is left for the next round; done means
// there is nothing left to watch, waiting that the container has not
// started: there is nothing to watch yet.
func (r *Runtime) monitorRound(id string, spawned bool) (done, waiting bool, c Container, err error) {
	look, done, waiting, c, err := r.monitorLook(id, spawned)
	if look == nil {
		return done, waiting, c, err
	}
	started := time.Now()
	results := append(hooks.OnDemand(r.liveInput(look.rec, c, look.spec), look.pf), removedLimits(look.removed)...)
	took := time.Since(started)

	l, err := r.Store.tryLockContainer(id)
	switch {
	case errors.Is(err, ErrNotExist):
		return true, false, c, nil
	case errors.Is(err, ErrBusy):
		return false, false, c, nil
	case err != nil:
		return true, false, c, err
	}
	defer l.unlock()
	rec, err := r.Store.readRecord(id)
	if err != nil {
		return true, false, c, nil
	}
	if now, err := json.Marshal(rec); err != nil || !bytes.Equal(now, look.data) {
		return false, false, c, nil
	}
	if st, err := c.Status(); err != nil || st == StatusStopped {
		return true, false, c, nil
	}
	if rec.Monitor == nil {
		rec.Monitor = &MonitorState{}
	}
	rec.Monitor.Rounds++
	summary := hooks.Summarize(results)
	if summary == hooks.AllPass {
		rec.Monitor.Last = ""
		return false, false, c, r.Store.writeRecordLocked(rec)
	}
	// The same inconclusive state as last round: counted, not judged again
	// (nor audited every period).
	outcome := hooks.Brief(results)
	if summary == hooks.Inconclusive && outcome == rec.Monitor.Last {
		return false, false, c, r.Store.writeRecordLocked(rec)
	}
	rec.Monitor.Last = outcome
	action, _ := launch.PostLaunch(rec.Level, summary, false)
	if action == launch.Kill {
		rec.Monitor.Kills++ // judgeLocked writes the record as it kills
	}
	jerr := r.judgeLocked(rec, c, phaseMonitor, results, took)
	if summary == hooks.AnyFail {
		// Killed, or at degraded recorded: the monitor's work is done
		// (the FAIL stands until delete).
		return true, false, c, jerr
	}
	return false, false, c, jerr
}

// monitorLookup is what a round reads under the lock before it lets go.
type monitorLookup struct {
	rec     *Record
	data    []byte // rec as read: the round judges only if it is unchanged
	spec    *specs.Spec
	removed []string
	pf      hooks.PostFacts
}

// monitorLook reads, under the container's lock, what a round needs; nil
// when there is nothing to look at this round (done says whether ever,
// waiting that the container is not started yet).
func (r *Runtime) monitorLook(id string, spawned bool) (look *monitorLookup, done, waiting bool, c Container, err error) {
	l, err := r.Store.tryLockContainer(id)
	switch {
	case errors.Is(err, ErrNotExist):
		return nil, true, false, nil, nil
	case errors.Is(err, ErrBusy):
		return nil, false, false, nil, nil
	case err != nil:
		return nil, true, false, nil, err
	}
	defer l.unlock()
	rec, err := r.Store.readRecord(id)
	if err != nil || r.fromAnotherBoot(rec) {
		// A record of another boot names no process of this one to
		// watch (and a monitor that reads it is not the one it names).
		return nil, true, false, nil, nil
	}
	if spawned && (rec.Monitor == nil || rec.Monitor.Pid != os.Getpid()) {
		// Not the monitor the record names: its start failed, or it
		// was begun for a start that never happened.
		return nil, true, false, nil, nil
	}
	c, err = r.Backend.Load(r.Store.BackendDir(id), id)
	if err != nil {
		return nil, true, false, nil, nil
	}
	st, err := c.Status()
	if err != nil || st == StatusStopped {
		return nil, true, false, c, nil
	}
	if rec.State.Fatal() || rec.State == StateTerminating {
		return nil, true, false, c, nil
	}
	if st == StatusCreated || rec.State == StateLaunchable {
		// A monitor begun at create: the init waits for start, and the
		// program it will verify does not run yet.
		return nil, false, true, c, nil
	}
	pf, ok := r.postFacts()
	if !ok || rec.Baseline == nil {
		return nil, true, false, c, nil
	}
	sp, err := r.Store.readSpec(rec)
	if err != nil {
		if errors.Is(err, ErrSpecMismatch) {
			_ = r.Store.moveLocked(rec, StateDriftDetected, err.Error())
			return nil, true, false, c, stopAfterFailure(c, fmt.Errorf("monitor %q: %w", id, err))
		}
		return nil, true, false, c, nil
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, true, false, c, err
	}
	removed := withCurrentLimits(sp, rec.Limits)
	return &monitorLookup{rec: rec, data: data, spec: sp, removed: removed, pf: pf}, false, false, c, nil
}

// startMonitorLocked starts the container's monitor once its process runs
// (not for --no-verify: the monitor is verification) and writes the record
// that names it. A monitor that cannot start fails a strict launch and is a
// warning elsewhere.
func (r *Runtime) startMonitorLocked(rec *Record, c Container) error {
	s := r.beginMonitor(rec)
	if s == nil {
		return nil
	}
	if err := r.joinMonitorLocked(rec, c, s, "start"); err != nil {
		return err
	}
	return r.Store.writeRecordLocked(rec)
}

// monitorSpawn is a monitor being started beside the rest of a start.
type monitorSpawn struct {
	done  chan struct{}
	pid   int
	start uint64
	err   error
}

// beginMonitor starts container rec's monitor in the background, or
// returns nil where it has none (--no-verify, a platform without host
// facts). A detached start begins it once the program runs: the
// monitor's fork, exec and Go start-up then overlap the post-exec checks
// (begun before the canaries, they slowed the canaries and the exec,
// which want both of a two-CPU host's CPUs), and its pid reaches the
// record in the write verification makes anyway. The monitor's first look takes the
// container's lock, so it looks only once the start is over; and it runs
// with the record as its licence (SpawnMonitor passes --spawned): one
// whose start failed before the record named it leaves at that look,
// and the start stops it first (abandonMonitor).
func (r *Runtime) beginMonitor(rec *Record) *monitorSpawn {
	if rec.NoVerify || r.SpawnMonitor == nil {
		return nil
	}
	if _, ok := r.postFacts(); !ok {
		return nil
	}
	s := &monitorSpawn{done: make(chan struct{})}
	id := rec.ID
	go func() {
		defer close(s.done)
		s.pid, s.start, s.err = r.SpawnMonitor(id)
	}()
	return s
}

// joinMonitorLocked waits for spawn s and puts the monitor in rec, in
// memory: the caller's next record write stores it. A spawn that failed
// fails a strict launch (the container is killed) and is a note and a
// warning elsewhere.
func (r *Runtime) joinMonitorLocked(rec *Record, c Container, s *monitorSpawn, verb string) error {
	if s == nil {
		return nil
	}
	<-s.done
	if s.err == nil {
		rec.Monitor = &MonitorState{Pid: s.pid, StartTime: s.start}
		return nil
	}
	if rec.Level == LevelStrict {
		_ = r.Store.moveLocked(rec, StatePostLaunchFailed, "monitor: "+s.err.Error())
		return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "%s %q: the monitor did not start, which strict does not accept: %w", verb, rec.ID, s.err))
	}
	note := "monitor: not running (" + s.err.Error() + ")"
	if !slices.Contains(rec.Notes, note) {
		rec.Notes = append(rec.Notes, note)
	}
	r.Warnf("%q runs without its monitor: %v", rec.ID, s.err)
	return nil
}

// abandonMonitor stops the monitor spawn s started for a start that
// failed, so that nothing of the container's outlives the failed start
// by even the one look it would take to leave on its own.
func (r *Runtime) abandonMonitor(s *monitorSpawn) {
	if s == nil {
		return
	}
	<-s.done
	if s.err != nil {
		return
	}
	r.stopMonitor(&Record{Monitor: &MonitorState{Pid: s.pid, StartTime: s.start}})
}

// lazyMonitorDelay is when a foreground run spawns its container's
// monitor: the monitor's own first round is as late, so a job done before
// it never needed one, and does not pay for a process.
const lazyMonitorDelay = 100 * time.Millisecond

// lazyMonitor spawns container id's monitor after lazyMonitorDelay if the
// container still runs, unless the returned stop is called first; stop
// returns once no spawn is under way (the run's delete, next, stops a
// monitor that was spawned).
// stop's error is the spawn's failure where the level does not accept
// it (strict: the container was killed).
func (r *Runtime) lazyMonitor(id string) (stop func() error) {
	cancel, done := make(chan struct{}), make(chan struct{})
	var spawnErr error
	go func() {
		defer close(done)
		select {
		case <-cancel:
			return
		case <-time.After(lazyMonitorDelay):
		}
		l, rec, c, err := r.loadLocked(id)
		if err != nil {
			return // gone, or being deleted: nothing to watch
		}
		defer l.unlock()
		if c == nil || rec.Monitor != nil || r.initExited(rec, c) {
			return
		}
		spawnErr = r.startMonitorLocked(rec, c)
	}()
	return func() error {
		close(cancel)
		<-done
		return spawnErr
	}
}

// monitorAlive says whether the monitor rec names runs: that pid, started
// then (not a reuse of the pid), and not exiting.
func (r *Runtime) monitorAlive(rec *Record) bool {
	ps, ok := r.monitorProc(rec)
	return ok && !ps.Gone()
}

// monitorProc is the stat of the monitor rec names, if that process is
// still there: its pid, started when the record says (not a reuse).
func (r *Runtime) monitorProc(rec *Record) (hooks.ProcState, bool) {
	m := rec.Monitor
	pf, ok := r.postFacts()
	if m == nil || m.Pid <= 0 || !ok {
		return hooks.ProcState{}, false
	}
	ps, err := pf.ProcStat(m.Pid)
	return ps, err == nil && ps.Start == m.StartTime
}

// monitorExited says whether the monitor rec names has finished exiting:
// its pid gone or another process's, or a zombie. An exiting one (the
// kernel's PF_EXITING, which monitorAlive counts as not running) is not
// yet: it is still a process on the host, tearing down its memory and
// files, and a caller that looks, once delete has returned, for what the
// container left behind finds it there.
func (r *Runtime) monitorExited(rec *Record) bool {
	ps, ok := r.monitorProc(rec)
	return !ok || ps.State == 'Z' || ps.State == 'X'
}

// stopMonitor ends container rec's monitor before its teardown and says
// what it did: stopped once its process has finished exiting, so that
// the delete that reports it stopped leaves nothing of it on the host.
// The caller holds the container's lock, so the monitor is between
// rounds.
func (r *Runtime) stopMonitor(rec *Record) *hooks.MonitorReceipt {
	m := rec.Monitor
	if m == nil || m.Pid == 0 {
		return nil
	}
	out := &hooks.MonitorReceipt{Pid: m.Pid, Rounds: m.Rounds, Kills: m.Kills}
	if _, ok := r.postFacts(); !ok {
		return out
	}
	exited := func() bool { return r.monitorExited(rec) }
	if exited() {
		out.Stopped = true
		return out
	}
	// A monitor exits within a millisecond of its signal; Go sleeps no
	// less than that anyway.
	_ = signalPid(m.Pid, false)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if exited() {
			out.Stopped = true
			return out
		}
	}
	_ = signalPid(m.Pid, true)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if exited() {
			out.Stopped = true
			break
		}
	}
	return out
}
