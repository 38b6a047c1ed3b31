package runtime

import (
	"errors"
	"fmt"
	"slices"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// ProbeSelf is how the probe names the runtime inside a container: the
// process libcontainer starts there runs a sealed copy of this binary, and
// the binary is static, so it runs in any rootfs.
const ProbeSelf = "/proc/self/exe"

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
		CgroupPaths: c.CgroupPaths(), ProbeSelf: ProbeSelf, Landlock: rec.Landlock,
	}
}

// probeRunner runs the probe as the container's own process would run:
// its user, capabilities and no_new_privs, joined to its namespaces,
// cgroup and seccomp filter.
func probeRunner(c Container, sp *specs.Spec) hooks.ProbeRunner {
	return func(args []string, timeout time.Duration) ([]byte, error) {
		// A process that has already exited (a short command under `run`)
		// leaves nothing to join: launching the probe would only cost an
		// exec to learn that. The canaries say UNAVAILABLE either way.
		if st, err := c.Status(); err == nil && st == StatusStopped {
			return nil, fmt.Errorf("the container's process exited before the probe could join it")
		}
		p := *sp.Process
		p.Args, p.Env, p.Terminal, p.ConsoleSize = args, nil, false, nil
		return c.RunProbe(&p, args, timeout)
	}
}

// verifyPostLaunchLocked is the poststart verification (DESIGN.md §6): P1,
// P2 and the P3 canaries, on the container whose user process has just
// exec'd. All PASS on host evidence → VerifiedRuntime. A FAIL at standard
// or strict kills the container (cgroup.kill) and fails the start with
// 125; at degraded it is recorded and the container runs on, not
// verified. Anything inconclusive leaves it Running, never
// VerifiedRuntime, and at strict is a failure.
func (r *Runtime) verifyPostLaunchLocked(rec *Record, c Container, sp *specs.Spec) error {
	if rec.NoVerify {
		// An accepted degradation (verify): --no-verify, or a platform
		// without host facts; the record and the launch line say so.
		return nil
	}
	start := time.Now()
	var results []hooks.Result
	pf, ok := r.postFacts()
	switch {
	case !ok:
		results = []hooks.Result{{Check: "P1/identity", Verdict: hooks.Unavailable, Expected: "host facts of the running process", Found: "this platform reads none"}}
	case rec.Baseline == nil:
		results = []hooks.Result{{Check: "P1/identity", Verdict: hooks.Unavailable, Expected: "the init recorded at create", Found: "no baseline was recorded"}}
	default:
		results = hooks.PostLaunch(r.liveInput(rec, c, sp), pf, probeRunner(c, sp))
	}
	return r.judgeLocked(rec, c, phasePoststart, results, time.Since(start))
}

// judgeLocked records verdicts and acts on them as the launch evaluator
// says (launch.PostLaunch). phase is phasePoststart or phaseVerify; at
// degraded a FAIL fails only verify, whose caller asked whether the
// container holds, while poststart records it and runs on.
func (r *Runtime) judgeLocked(rec *Record, c Container, phase string, results []hooks.Result, took time.Duration) error {
	if err := r.Store.auditLocked(AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: rec.Level.String(), Event: "verdicts", Reason: phase, Results: results, Duration: took}, true); err != nil {
		return stopAfterFailure(c, err)
	}
	rec.Verdicts = results
	summary := hooks.Summarize(results)
	exited := false
	if summary == hooks.Inconclusive {
		if st, err := c.Status(); err == nil && st == StatusStopped {
			exited = true
		}
	}
	action, rule := launch.PostLaunch(rec.Level, summary, exited)
	switch action {
	case launch.Verified:
		rec.Verification = string(hooks.Pass)
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
		bad := hooks.Failed(hooks.Only(results, hooks.Fail))
		if bad == "" {
			bad = hooks.Failed(results)
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
			r.Warnf("degraded: %s verification of %q failed: %s", phase, rec.ID, bad)
			if phase == phasePoststart {
				return nil
			}
			// verify was asked whether the container holds: it does not.
			return Errorf(ErrPostLaunchFailed, "%s verification of %q failed (level degraded: recorded, container left running): %s", phase, rec.ID, bad)
		}
		_ = r.Store.moveLocked(rec, to, bad)
		what := "failed"
		if summary != hooks.AnyFail {
			what = "inconclusive, which strict does not accept;"
		}
		return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "%s verification of %q %s container killed [%s]: %s", phase, rec.ID, what, rule, bad))
	case launch.Exited:
		// The process exited before it could be verified: nothing is left
		// to verify or to kill, and its sandbox was verified before it
		// could exec (pre-launch).
		rec.Verification = "EXITED"
		return r.Store.writeRecordLocked(rec)
	default:
		rec.Verification = "INCONCLUSIVE"
		if err := r.Store.writeRecordLocked(rec); err != nil {
			return err
		}
		r.Warnf("%s verification of %q inconclusive, container not verified: %s", phase, rec.ID, hooks.Failed(results))
		return nil
	}
}

// Verify re-runs the runtime verification on a running container (P1–P4,
// P6, P7) and acts on it as poststart does: a FAIL kills the container at
// standard and strict. It returns the verdicts and an error if any check
// failed.
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
	if !ok {
		return nil, Errorf(ErrBackendUnavailable, "verify %q: no host facts on this platform", id)
	}
	if rec.Baseline == nil {
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
	removed := withCurrentLimits(sp, rec.Limits)
	start := time.Now()
	results := append(hooks.OnDemand(r.liveInput(rec, c, sp), pf, probeRunner(c, sp)), removedLimits(removed)...)
	return results, r.judgeLocked(rec, c, phaseVerify, results, time.Since(start))
}

// withCurrentLimits puts the limits as they stand (the frozen spec's,
// changed by audited updates) into sp, a copy read for this verification
// only, where P7 expects them. A limit an accepted update removed (-1) is
// left out of sp, and returned so P7 says so instead of dropping it.
func withCurrentLimits(sp *specs.Spec, l launch.Limits) (removed []string) {
	if sp.Linux == nil {
		return nil
	}
	if sp.Linux.Resources == nil {
		sp.Linux.Resources = &specs.LinuxResources{}
	}
	res := sp.Linux.Resources
	if l.Memory != nil {
		if res.Memory == nil {
			res.Memory = &specs.LinuxMemory{}
		}
		res.Memory.Limit = l.Memory
		if *l.Memory < 0 {
			removed = append(removed, "memory")
		}
	}
	if l.Pids != nil {
		res.Pids = &specs.LinuxPids{Limit: l.Pids}
		if *l.Pids < 0 {
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
