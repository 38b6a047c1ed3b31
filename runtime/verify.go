package runtime

import (
	"errors"
	"fmt"
	"slices"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
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
const NoVerifyReason = "verification: post-launch verification skipped (--no-verify)"

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
		return nil
	}
	pf, ok := r.postFacts()
	if !ok || rec.Baseline == nil {
		if rec.Level == LevelStrict {
			why := "no post-launch facts on this platform"
			_ = r.Store.moveLocked(rec, StatePostLaunchFailed, why)
			return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "start %q: strict needs post-launch verification: %s", rec.ID, why))
		}
		return nil
	}
	start := time.Now()
	results := hooks.PostLaunch(r.liveInput(rec, c, sp), pf, probeRunner(c, sp))
	return r.judgeLocked(rec, c, phasePoststart, results, time.Since(start))
}

// judgeLocked records verdicts and acts on them. phase is phasePoststart
// or phaseVerify; at degraded a FAIL fails only verify, whose caller asked
// whether the container holds, while poststart records it and runs on.
func (r *Runtime) judgeLocked(rec *Record, c Container, phase string, results []hooks.Result, took time.Duration) error {
	if err := r.Store.auditLocked(AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: rec.Level.String(), Event: "verdicts", Reason: phase, Results: results, Duration: took}, true); err != nil {
		return stopAfterFailure(c, err)
	}
	rec.Verdicts = results
	switch hooks.Summarize(results) {
	case hooks.AllPass:
		rec.Verification = string(hooks.Pass)
		if rec.State == StateRunning {
			return r.Store.moveLocked(rec, StateVerifiedRuntime, "")
		}
		return r.Store.writeRecordLocked(rec)
	case hooks.AnyFail:
		rec.Verification = string(hooks.Fail)
		failed := hooks.Failed(hooks.Only(results, hooks.Fail))
		to := StatePostLaunchFailed
		if rec.State == StateVerifiedRuntime {
			to = StateDriftDetected
		}
		if rec.Level == LevelDegraded {
			// Recorded, named, and the container runs on: what degraded
			// means. It is not VerifiedRuntime, and says why.
			if note := phase + " FAIL: " + failed; !slices.Contains(rec.Degraded, note) {
				rec.Degraded = append(rec.Degraded, note)
			}
			if rec.State == StateVerifiedRuntime {
				if err := r.Store.moveLocked(rec, StateDriftDetected, failed); err != nil {
					return err
				}
			} else if err := r.Store.writeRecordLocked(rec); err != nil {
				return err
			}
			r.Warnf("degraded: %s verification of %q failed: %s", phase, rec.ID, failed)
			if phase == phasePoststart {
				return nil
			}
			// verify was asked whether the container holds: it does not.
			return Errorf(ErrPostLaunchFailed, "%s verification of %q failed (level degraded: recorded, container left running): %s", phase, rec.ID, failed)
		}
		_ = r.Store.moveLocked(rec, to, failed)
		return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "%s verification of %q failed, container killed: %s", phase, rec.ID, failed))
	default:
		rec.Verification = "INCONCLUSIVE"
		if err := r.Store.writeRecordLocked(rec); err != nil {
			return err
		}
		if st, err := c.Status(); err == nil && st == StatusStopped {
			// The process exited before it could be verified: there is
			// nothing left to verify or to kill.
			return nil
		}
		bad := hooks.Failed(results)
		if rec.Level == LevelStrict {
			_ = r.Store.moveLocked(rec, StatePostLaunchFailed, bad)
			return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "%s verification of %q inconclusive, which strict does not accept; container killed: %s", phase, rec.ID, bad))
		}
		r.Warnf("%s verification of %q inconclusive, container not verified: %s", phase, rec.ID, bad)
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
	withUpdatedLimits(sp, rec.Updated)
	start := time.Now()
	results := hooks.OnDemand(r.liveInput(rec, c, sp), pf, probeRunner(c, sp))
	return results, r.judgeLocked(rec, c, phaseVerify, results, time.Since(start))
}

// withUpdatedLimits puts the limits `update` set into sp (a copy read for
// this verification only), where P7 expects them.
func withUpdatedLimits(sp *specs.Spec, u *UpdatedLimits) {
	if u == nil || sp.Linux == nil {
		return
	}
	if sp.Linux.Resources == nil {
		sp.Linux.Resources = &specs.LinuxResources{}
	}
	res := sp.Linux.Resources
	if u.Memory != nil {
		if res.Memory == nil {
			res.Memory = &specs.LinuxMemory{}
		}
		res.Memory.Limit = u.Memory
	}
	if u.Pids != nil {
		res.Pids = &specs.LinuxPids{Limit: u.Pids}
	}
}
