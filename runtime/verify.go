package runtime

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// The two phases that judge a running container.
const (
	phasePoststart = "poststart"
	phaseVerify    = "verify"
)

// NoVerifyReason is the degradation --no-verify records.
const NoVerifyReason = "verify: post-launch verification skipped (--no-verify)"

// postFacts are the facts post-launch verification needs, if this
// platform's facts have them.
func (r *Runtime) postFacts() (hooks.PostFacts, bool) {
	pf, ok := r.Facts.(hooks.PostFacts)
	return pf, ok
}

// recordBaselineLocked records the init's identity, namespaces and cgroups
// once pre-launch verification passed: what P1 and P2 compare against.
func (r *Runtime) recordBaselineLocked(cr *created) error {
	pf, ok := r.postFacts()
	if !ok {
		return nil
	}
	b, err := hooks.TakeBaseline(cr.c.InitPid(), cr.c.CgroupPaths(), pf)
	if err != nil {
		return Errorf(ErrPreLaunchFailed, "create %q: %w", cr.rec.ID, err)
	}
	cr.rec.Baseline = b
	return nil
}

// liveInput describes c for the post-launch checks.
func (r *Runtime) liveInput(rec *Record, c Container, sp *specs.Spec) hooks.LiveInput {
	return hooks.LiveInput{
		Pid: c.InitPid(), Baseline: rec.Baseline, Spec: sp, Rootfs: rec.Rootfs,
		CgroupPaths: c.CgroupPaths(), NoCgroup: rec.NoCgroup,
		Sharers: func() []map[string]string { return r.pidNamespaceSharers(rec) },
	}
}

// pidNamespaceSharers are the cgroups of the other containers under this
// root whose init was, at their launch, in rec's pid namespace: they
// joined it. Only this root's are known (a Kubernetes pod's containers,
// podman's, share one); a container of another root, or of another
// runtime, that joins the namespace is judged an intruder. A record that
// cannot be read names no one.
func (r *Runtime) pidNamespaceSharers(rec *Record) []map[string]string {
	if rec.Baseline == nil {
		return nil
	}
	pidns, ok := rec.Baseline.Namespaces[string(specs.PIDNamespace)]
	if !ok {
		return nil
	}
	ids, err := r.Store.ids()
	if err != nil {
		return nil
	}
	var out []map[string]string
	for _, id := range ids {
		if id == rec.ID {
			continue
		}
		other, err := r.Store.readRecord(id)
		if err != nil || other.Baseline == nil {
			continue
		}
		if ns, ok := other.Baseline.Namespaces[string(specs.PIDNamespace)]; ok && ns == pidns {
			out = append(out, other.Baseline.Cgroups)
		}
	}
	return out
}

// wantsCanaries says whether a container is created behind the exec shim
// for the P3 canaries: it is verified (not --no-verify), this platform
// reads host facts, it has a process, and its spec plans some canaries.
func (r *Runtime) wantsCanaries(unverified bool, sp *specs.Spec) bool {
	if _, ok := r.postFacts(); !ok || unverified || sp.Process == nil {
		return false
	}
	plan, err := hooks.PlanCanaries(sp)
	// A plan that cannot be made is judged (UNAVAILABLE) at start.
	return err != nil || !plan.Empty()
}

// startWithCanaries lets the init go and, when the container has
// canaries, judges them while the exec shim waits before the program
// (docs/verification.md): the canaries' attempts are made by the very process the
// program will be, in its domain, before any of the workload's code runs,
// so nothing of the workload can see, race or forge them. A verdict that
// kills (a FAIL at standard or strict, inconclusive at strict) aborts the
// shim: the program never runs. It returns the canaries' verdicts, to be
// judged with the post-exec checks.
func (r *Runtime) startWithCanaries(rec *Record, c Container, sp *specs.Spec, prepared func() *hooks.CanarySession) ([]hooks.Result, time.Duration, error) {
	if rec.CanariesAtCreate {
		// Made and judged at create: the init only waits to exec, and
		// their verdicts are judged again with the post-exec checks.
		if err := r.launchDurableLocked(rec, c); err != nil {
			return nil, 0, err
		}
		if _, err := c.Start(sp, nil); err != nil {
			return nil, 0, r.startFailedLocked(rec, c, sp, err)
		}
		if err := r.Store.passLocked(rec, StateRunning, ""); err != nil {
			return nil, 0, stopAfterFailure(c, err)
		}
		// Judged next with the post-exec checks, and kept with them.
		canaries, took := rec.Canaries, rec.CanaryTook
		rec.Canaries, rec.CanaryTook = nil, 0
		return canaries, took, nil
	}
	var session *hooks.CanarySession
	var ask *canary.Config
	if rec.Canary {
		session = prepared()
		defer session.Close()
		ask = &session.Request
	} else if err := r.launchDurableLocked(rec, c); err != nil {
		// Without canaries the program execs as the init is let go.
		return nil, 0, err
	}
	pf, havePF := r.postFacts()
	report, err := c.Start(sp, ask)
	if err != nil {
		return nil, 0, r.startFailedLocked(rec, c, sp, err)
	}
	// Running is not written: verification, next, writes the state it
	// ends in (VerifiedRuntime, Running unverified, or a failure) a few
	// milliseconds later; the audit log has the move.
	if err := r.Store.passLocked(rec, StateRunning, ""); err != nil {
		_ = c.Proceed(false)
		return nil, 0, stopAfterFailure(c, err)
	}
	if session == nil {
		return nil, 0, nil
	}
	began := time.Now()
	results := []hooks.Result{{Check: "P3/canaries", Verdict: hooks.Unavailable, Expected: "the exec shim's report and the host's facts", Found: "the backend returned no report, or this platform reads no host facts"}}
	if havePF && report != nil {
		// The masked paths are read now, not while the init makes the
		// canaries: this path is the one of bundles with startContainer
		// hooks, which run in the container at start, before the
		// canaries, and can unmount a mask a look taken beside them
		// would still have seen.
		pid := c.InitPid()
		results = session.JudgeObserved(pid, *report, nil, pf, session.Observe(pid, rec.Rootfs, pf))
	}
	took := time.Since(began)
	if action, _ := launch.PostLaunch(rec.Level, hooks.Summarize(results), false); action == launch.Kill {
		// Abort before the program: the shim exits, and judgeLocked
		// records why, kills what is left and fails the start (125).
		_ = c.Proceed(false)
		return nil, 0, r.judgeLocked(rec, c, phasePoststart, results, took)
	}
	// The program execs at the verdict.
	if err := r.launchDurableLocked(rec, c); err != nil {
		_ = c.Proceed(false)
		return nil, 0, err
	}
	if err := c.Proceed(true); err != nil {
		_ = r.Store.moveLocked(rec, StateSpawnFailed, err.Error())
		return nil, 0, stopAfterFailure(c, fmt.Errorf("start %q: %w", rec.ID, spawnFailed(err)))
	}
	return results, took, nil
}

// startFailedLocked records a Start that failed and stops c.
func (r *Runtime) startFailedLocked(rec *Record, c Container, sp *specs.Spec, err error) error {
	if mm := executableMismatch(rec, c, sp); mm != nil {
		_ = r.Store.moveLocked(rec, StateSpecMismatch, mm.Error())
		return stopAfterFailure(c, mm)
	}
	// The spec: a failing startContainer hook means "stop the
	// container"; any other failure to start leaves nothing to run.
	_ = r.Store.moveLocked(rec, StateSpawnFailed, err.Error())
	return stopAfterFailure(c, fmt.Errorf("start %q: %w", rec.ID, spawnFailed(err)))
}

// prepareCanaries makes the host's side of container rec's canaries (the
// plan, the nonce, the listener on the host's loopback: 0.8 ms on the
// 2-CPU test host, most of it the network poller's first use) in the
// background, beside the start's other checks, and returns the wait for
// it; nil for a container without canaries.
func prepareCanaries(rec *Record, sp *specs.Spec) func() *hooks.CanarySession {
	if !rec.Canary || rec.CanariesAtCreate {
		return nil
	}
	return beginCanarySession(sp)
}

// beginCanarySession makes the canaries' host side of sp on a goroutine
// and returns the wait for it, which may be called more than once.
func beginCanarySession(sp *specs.Spec) func() *hooks.CanarySession {
	done := make(chan *hooks.CanarySession, 1)
	go func() { done <- hooks.NewCanarySession(sp) }()
	return sync.OnceValue(func() *hooks.CanarySession { return <-done })
}

// launchDurableLocked waits for the launch's fsync (a run's, begun by
// auditLaterLocked) before the program may exec: evidence that cannot be
// made durable fails the start, and c is stopped (nothing runs).
func (r *Runtime) launchDurableLocked(rec *Record, c Container) error {
	err := r.Store.waitDurable()
	if err == nil {
		return nil
	}
	_ = r.Store.moveLocked(rec, StateSpawnFailed, err.Error())
	return stopAfterFailure(c, fmt.Errorf("start %q: %w", rec.ID, err))
}

// earlyMembership begins reading P2 of the container's init, which its
// exec cannot change, for verifyPostLaunchLocked: a start reads it while
// the init runs the canaries and execs, when the host has nothing else to
// do. nil where post-launch verification reads no host facts.
func (r *Runtime) earlyMembership(rec *Record, c Container, sp *specs.Spec) func() []hooks.Result {
	pf, ok := r.postFacts()
	if rec.NoVerify || !ok || rec.Baseline == nil {
		return nil
	}
	return hooks.EarlyMembership(r.liveInput(rec, c, sp), pf)
}

// verifyPostLaunchLocked is the poststart verification (docs/verification.md) on
// the container whose program has just exec'd: P1, P2 and every
// process's restrictions, judged with the canaries the shim ran before
// the exec and that the process is past the shim (given in canaries). All PASS on host evidence → VerifiedRuntime. A FAIL at
// standard or strict kills the container (cgroup.kill) and fails the
// start with 125; at degraded it is recorded and the container runs on,
// not verified. Anything inconclusive leaves it Running, never
// VerifiedRuntime, and at strict is a failure.
//
// monitor, begun beside the checks, is joined before the record is
// written: the write that records the verdicts names it.
func (r *Runtime) verifyPostLaunchLocked(rec *Record, c Container, sp *specs.Spec, canaries []hooks.Result, canaryTook time.Duration, monitor *monitorSpawn, membership func() []hooks.Result) error {
	if rec.NoVerify {
		if err := r.joinMonitorLocked(rec, c, monitor, "start"); err != nil {
			return err // none is begun for --no-verify: for the contract's sake
		}
		// An accepted degradation (verify): --no-verify, or a platform
		// without host facts; the record and the launch line say so. A
		// process still in the Landlock shim is no verification's matter:
		// it did not get its domain, and that is judged anyway. So is a
		// FAIL a platform backend read in Start: the host saw it.
		if r.platformVerifies(c) {
			canaries = append(canaries, hooks.Only(platformPostLaunch(c), hooks.Fail)...)
		}
		if len(hooks.Only(canaries, hooks.Fail)) == 0 {
			return r.Store.writeRecordLocked(rec) // Running, unverified
		}
		return r.judgeLocked(rec, c, phasePoststart, canaries, canaryTook)
	}
	start := time.Now()
	var results []hooks.Result
	pf, ok := r.postFacts()
	switch {
	case !ok && r.platformVerifies(c):
		// What the backend read of its own sandbox in Start, judged here.
		results = platformPostLaunch(c)
	case !ok:
		results = []hooks.Result{{Check: "P1/identity", Verdict: hooks.Unavailable, Expected: "host facts of the running process", Found: "this platform reads none"}}
	case rec.Baseline == nil:
		results = []hooks.Result{{Check: "P1/identity", Verdict: hooks.Unavailable, Expected: "the init recorded at create", Found: "no baseline was recorded"}}
	default:
		results = hooks.PostExecWith(r.liveInput(rec, c, sp), pf, membership)
	}
	took := canaryTook + time.Since(start)
	if err := r.joinMonitorLocked(rec, c, monitor, "start"); err != nil {
		return err
	}
	return r.judgeLocked(rec, c, phasePoststart, append(canaries, results...), took)
}

// initExited says the container's init has exited: the backend says it
// stopped, or the host reads it gone, a zombie, or in do_exit
// (PF_EXITING) — which it is a moment before the backend sees it stopped.
func (r *Runtime) initExited(rec *Record, c Container) bool {
	if st, err := c.Status(); err == nil && st == StatusStopped {
		return true
	}
	pf, ok := r.postFacts()
	if !ok || rec.Baseline == nil {
		return false
	}
	ps, err := pf.ProcStat(c.InitPid())
	return err != nil || ps.Start != rec.Baseline.StartTime || ps.Gone()
}

// judgeLocked records verdicts and acts on them as the launch evaluator
// says (launch.PostLaunch). phase is phasePoststart or phaseVerify; at
// degraded a FAIL fails only verify, whose caller asked whether the
// container holds, while poststart records it and runs on.
func (r *Runtime) judgeLocked(rec *Record, c Container, phase string, results []hooks.Result, took time.Duration) error {
	summary := hooks.Summarize(results)
	exited := summary == hooks.Inconclusive && r.initExited(rec, c)
	action, rule := launch.PostLaunch(rec.Level, summary, exited)
	// The verdicts are evidence before anything is done on them, so they
	// are fsync'd — except when the process had exited before it could be
	// verified: nothing is decided on those (it is neither promoted nor
	// killed), and the next durable event (the receipt of its teardown,
	// in the same log) syncs them with it. A short foreground run makes
	// one fsync fewer. All PASS, nothing is killed or refused on them:
	// their fsync runs beside the record's promotion, and the command
	// ends only once it is done (the lock's release waits for it), or a
	// foreground run's teardown that follows under the same lock does.
	// Such a run's promotion is passed, not written, and its verdicts
	// wait in the batch (promoteLater): for a short job the teardown's
	// receipt, next, carries both to the log in one append and one
	// fsync, and the record is never written at VerifiedRuntime.
	ev := AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: rec.Level.String(), Event: "verdicts", Reason: phase, Results: results, Duration: took}
	promoteLater := action == launch.Verified && phase == phasePoststart && rec.teardownOnExit && rec.State == StateRunning && r.Store.batch != nil
	var auditErr error
	switch {
	case action == launch.Exited, promoteLater:
		auditErr = r.Store.auditLocked(ev, false)
	case action == launch.Verified:
		auditErr = r.Store.auditLaterLocked(ev)
	default:
		auditErr = r.Store.auditLocked(ev, true)
	}
	if auditErr != nil {
		return stopAfterFailure(c, auditErr)
	}
	if phase == phasePoststart {
		rec.Poststart, rec.VerdictsAreLaunch = nil, true
	} else if rec.VerdictsAreLaunch {
		// The launch's, kept as Verdicts are replaced.
		rec.Poststart, rec.VerdictsAreLaunch = rec.Verdicts, false
	}
	rec.Verdicts = results
	switch action {
	case launch.Verified:
		// verify and the monitor do not run the canaries again: they
		// confirm a verified launch, never promote one whose canaries did
		// not pass.
		if phase != phasePoststart && hooks.Summarize(rec.LaunchVerdicts()) != hooks.AllPass {
			rec.Verification = "INCONCLUSIVE"
			return r.Store.writeRecordLocked(rec)
		}
		rec.Verification = string(hooks.Pass)
		if promoteLater {
			rec.promotionPending = true
			return r.Store.passLocked(rec, StateVerifiedRuntime, "")
		}
		if rec.State == StateRunning {
			return r.Store.moveLocked(rec, StateVerifiedRuntime, "")
		}
		return r.Store.writeRecordLocked(rec)
	case launch.Record, launch.Kill:
		if summary == hooks.AnyFail {
			rec.Verification = string(hooks.Fail)
		} else {
			rec.Verification = "INCONCLUSIVE"
		}
		// bad is recorded in full; brief is what a terminal gets, one
		// line (state, the audit log and verify have every verdict).
		bad, brief := hooks.Failed(hooks.Only(results, hooks.Fail)), hooks.Brief(hooks.Only(results, hooks.Fail))
		if bad == "" {
			bad, brief = hooks.Failed(results), hooks.Brief(results)
		}
		to := StatePostLaunchFailed
		if rec.State == StateVerifiedRuntime {
			to = StateDriftDetected
		}
		if action == launch.Record {
			// Recorded, named, and the container runs on: what degraded
			// means. It is not VerifiedRuntime, and says why.
			if note := phase + " FAIL: " + bad; !slices.Contains(rec.Degraded, note) {
				rec.Degraded = append(rec.Degraded, note)
			}
			if rec.State == StateVerifiedRuntime {
				if err := r.Store.moveLocked(rec, StateDriftDetected, bad); err != nil {
					return err
				}
			} else if err := r.Store.writeRecordLocked(rec); err != nil {
				return err
			}
			r.Warnf("degraded: %s verification of %q failed: %s", phase, rec.ID, brief)
			if phase == phasePoststart {
				return nil
			}
			// verify was asked whether the container holds: it does not.
			return Errorf(ErrPostLaunchFailed, "%s verification of %q failed (level degraded: recorded, container left running): %s", phase, rec.ID, brief)
		}
		_ = r.Store.moveLocked(rec, to, bad)
		what := "failed"
		if summary != hooks.AnyFail {
			what = "inconclusive, which strict does not accept;"
		}
		return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "%s verification of %q %s container killed [%s]: %s", phase, rec.ID, what, rule, brief))
	case launch.Exited:
		// The process exited before it could be verified: nothing is left
		// to verify or to kill, and its sandbox was verified before it
		// could exec (pre-launch).
		rec.Verification = "EXITED"
		if rec.teardownOnExit && phase == phasePoststart {
			return nil // the run's teardown, next under this lock, writes it
		}
		return r.Store.writeRecordLocked(rec)
	default:
		rec.Verification = "INCONCLUSIVE"
		if err := r.Store.writeRecordLocked(rec); err != nil {
			return err
		}
		r.Warnf("%s verification of %q inconclusive, container not verified: %s", phase, rec.ID, hooks.Brief(results))
		return nil
	}
}

// Verify re-runs the runtime verification on a running container — what
// can change after launch: P1, P2, the network namespace, P4, P6, P7 (the
// canaries ran once, before the program, in its domain, which cannot be
// loosened since) — and acts on it as poststart does: a FAIL kills the
// container at standard and strict. It returns the verdicts and an error
// if any check failed.
func (r *Runtime) Verify(id string) ([]hooks.Result, error) {
	l, rec, c, err := r.loadLocked(id)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	if c == nil {
		return nil, fmt.Errorf("verify %q: %w", id, ErrNotRunning)
	}
	st, err := c.Status()
	if err != nil {
		return nil, fmt.Errorf("verify %q: %w", id, err)
	}
	if st != StatusRunning {
		return nil, Errorf(ErrWrongState, "verify %q: container is %s, not running", id, st)
	}
	pf, ok := r.postFacts()
	platform := !ok && r.platformVerifies(c)
	if !ok && !platform {
		return nil, Errorf(ErrBackendUnavailable, "verify %q: no host facts on this platform", id)
	}
	if ok && rec.Baseline == nil {
		return nil, Errorf(ErrPostLaunchFailed, "verify %q: no baseline was recorded at create; the container cannot be verified", id)
	}
	sp, err := r.Store.readSpec(rec)
	if err != nil {
		if errors.Is(err, ErrSpecMismatch) {
			_ = r.Store.moveLocked(rec, StateDriftDetected, err.Error())
			return nil, stopAfterFailure(c, fmt.Errorf("verify %q: %w", id, err))
		}
		return nil, fmt.Errorf("verify %q: %w", id, err)
	}
	start := time.Now()
	if platform {
		// The backend reads its sandbox again; the core judges it as it
		// judges Linux's facts.
		results, err := platformOnDemand(c)
		if err != nil {
			return nil, err
		}
		return results, r.judgeLocked(rec, c, phaseVerify, results, time.Since(start))
	}
	removed := withCurrentLimits(sp, rec.Limits)
	results := append(hooks.OnDemand(r.liveInput(rec, c, sp), pf), removedLimits(removed)...)
	results = append(results, launchCanaries(rec)...)
	return results, r.judgeLocked(rec, c, phaseVerify, results, time.Since(start))
}

// launchCanaries is what the canaries found at launch, carried into
// verify's verdicts: they ran once, before the program, and what they did
// not show then no later check shows.
func launchCanaries(rec *Record) []hooks.Result {
	if !rec.Canary {
		return nil
	}
	r := hooks.Result{Check: "P3/at-launch", Evidence: hooks.HostFact, Expected: "every canary PASS at launch, before the program ran"}
	var p3 []hooks.Result
	for _, v := range rec.LaunchVerdicts() {
		if strings.HasPrefix(v.Check, "P3/") {
			p3 = append(p3, v)
		}
	}
	switch {
	case len(p3) == 0:
		r.Verdict, r.Found = hooks.Unavailable, "no canary verdicts recorded at launch"
	case hooks.Summarize(p3) == hooks.AllPass:
		r.Verdict, r.Found = hooks.Pass, fmt.Sprintf("%d canaries passed", len(p3))
	case hooks.Summarize(p3) == hooks.AnyFail:
		r.Verdict, r.Found = hooks.Fail, hooks.Brief(hooks.Only(p3, hooks.Fail))
	default:
		r.Verdict, r.Found = hooks.Partial, hooks.Brief(p3)
	}
	return []hooks.Result{r}
}

// withCurrentLimits puts the limits as they stand (the frozen spec's,
// changed by audited updates) into sp, a copy read for this verification
// only, where P7 expects them. A limit the container launched with that an
// accepted update removed (-1, or a value no machine reaches) is left out
// of sp, and returned so P7 says so instead of dropping it. A spec that
// asked for no limit (-1 of its own) removed nothing: P7 has no such
// check, and the container can still be verified.
func withCurrentLimits(sp *specs.Spec, l launch.Limits) (removed []string) {
	if sp.Linux == nil {
		return nil
	}
	if sp.Linux.Resources == nil {
		sp.Linux.Resources = &specs.LinuxResources{}
	}
	res := sp.Linux.Resources
	launchedMem, _ := spec.MemoryLimit(res)
	launchedPids, _ := spec.PidsLimit(res)
	// The record's limits replace the spec's, unified's included (which
	// would otherwise decide: spec.MemoryLimit).
	if len(res.Unified) > 0 && (l.Memory != nil || l.Pids != nil) {
		unified := maps.Clone(res.Unified)
		if l.Memory != nil {
			delete(unified, spec.UnifiedMemoryMax)
		}
		if l.Pids != nil {
			delete(unified, spec.UnifiedPidsMax)
		}
		res.Unified = unified
	}
	if l.Memory != nil {
		if res.Memory == nil {
			res.Memory = &specs.LinuxMemory{}
		}
		res.Memory.Limit = l.Memory
		if spec.MemoryUnbounded(*l.Memory) && spec.MemoryBounded(launchedMem) {
			removed = append(removed, "memory")
		}
	}
	if l.Pids != nil {
		res.Pids = &specs.LinuxPids{Limit: l.Pids}
		if spec.PidsUnbounded(*l.Pids) && spec.PidsBounded(launchedPids) {
			removed = append(removed, "pids")
		}
	}
	return removed
}

// removedLimits are P7's verdicts for limits an accepted update removed:
// the check stays, and says it cannot pass.
func removedLimits(removed []string) []hooks.Result {
	var out []hooks.Result
	for _, which := range removed {
		out = append(out, hooks.Result{Check: "P7/limits/" + which, Verdict: hooks.Unavailable, Evidence: hooks.HostFact,
			Feature: string(FeatureLimits), Expected: "the " + which + " limit the container launched with", Found: "removed by an update (accepted degradation: limits)"})
	}
	return out
}
