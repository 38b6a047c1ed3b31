package runtime

import (
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// canaryReason is the reason of the audit event that records canaries
// judged at create.
const canaryReason = "canaries"

// canariesAtCreate says whether a container's canaries are made at create
// (CreateRequest.CanaryAtCreate) rather than at start: always, unless the
// bundle has startContainer hooks. Those run in the container at start,
// after a create's canaries, and could change what the canaries saw (a
// mask unmounted, a mount made writable); made at start, the canaries
// come after them.
func canariesAtCreate(sp *specs.Spec) bool {
	return sp.Hooks == nil || len(sp.Hooks.StartContainer) == 0
}

// prepareCanariesAtCreate begins making the host's side of the canaries
// a create makes (prepareCanaries, for create): nil when it makes none.
func (r *Runtime) prepareCanariesAtCreate(cr *created) func() *hooks.CanarySession {
	sp := cr.plan.frozen.spec
	if _, ok := cr.c.(CreateCanaries); !ok || !cr.rec.Canary || !canariesAtCreate(sp) {
		return nil
	}
	if _, ok := r.postFacts(); !ok {
		return nil
	}
	return beginCanarySession(sp)
}

// canariesAtCreateLocked runs and judges the P3 canaries of a container
// whose init makes them at create, in its pre-exec step: restricted as
// the program will be, before it waits for start, before anything of
// the workload exists. The verdicts are judged as they are at start
// (launch.PostLaunch): a verdict that kills refuses the create (125, the
// process never runs); any other is kept in the record, and start judges
// it again with the post-exec checks. Moved from start to create, the
// exchange (two round trips to the init and its second wake-up) is off
// the start's path, which then only lets the init exec.
func (r *Runtime) canariesAtCreateLocked(cr *created, prepared func() *hooks.CanarySession) error {
	rec := cr.rec
	cc, ok := cr.c.(CreateCanaries)
	pf, havePF := r.postFacts()
	if prepared == nil || !ok || !havePF {
		return nil
	}
	session := prepared()
	defer session.Close()
	pid := cr.c.InitPid()
	// The masked paths' facts, which the attempts cannot change, are
	// read while the init makes them.
	observed := make(chan *hooks.MaskObservation, 1)
	go func() { observed <- session.Observe(pid, rec.Rootfs, pf) }()
	began := time.Now()
	report, err := cc.Canaries(&session.Request)
	seen := <-observed
	if err != nil {
		_ = cr.c.Proceed(false)
		_ = r.Store.moveLocked(rec, StatePreLaunchFailed, err.Error())
		return Errorf(ErrPreLaunchFailed, "%s; the process never ran", err)
	}
	results := session.JudgeObserved(pid, *report, nil, pf, seen)
	took := time.Since(began)
	summary := hooks.Summarize(results)
	if action, rule := launch.PostLaunch(rec.Level, summary, false); action == launch.Kill {
		_ = cr.c.Proceed(false)
		// Evidence with the refusal, which create fsyncs.
		if err := r.Store.auditLocked(AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: rec.Level.String(), Event: "verdicts", Reason: canaryReason, Results: results, Duration: took}, false); err != nil {
			return err
		}
		bad, brief := hooks.Failed(hooks.Only(results, hooks.Fail)), hooks.Brief(hooks.Only(results, hooks.Fail))
		if bad == "" {
			bad, brief = hooks.Failed(results), hooks.Brief(results)
		}
		_ = r.Store.moveLocked(rec, StatePreLaunchFailed, bad)
		what := "failed"
		if summary != hooks.AnyFail {
			what = "were inconclusive, which strict does not accept"
		}
		return Errorf(ErrPreLaunchFailed, "the canaries %s; the process never ran [%s]: %s", what, rule, brief)
	}
	if err := cr.c.Proceed(true); err != nil {
		_ = r.Store.moveLocked(rec, StatePreLaunchFailed, err.Error())
		return WithKind(ErrPreLaunchFailed, err)
	}
	rec.CanariesAtCreate, rec.Canaries, rec.CanaryTook = true, results, took
	return nil
}
