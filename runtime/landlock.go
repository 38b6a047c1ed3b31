package runtime

import (
	"fmt"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/landlock"
)

// planLandlock decides what the Landlock exec shim enforces for a bundle
// with a dev.vetto.landlock annotation, before anything exists: the
// ruleset as given when the host's ABI enforces every right it handles;
// otherwise a refusal naming the missing rights, unless the level accepts
// the degradation — then the rights the host enforces, with the rest
// named in p.Degraded. "" means no shim.
func (r *Runtime) planLandlock(level Level, p *Plan, s *specs.Spec) (string, error) {
	annotation, ok := s.Annotations[AnnotationLandlock]
	if !ok {
		return "", nil
	}
	rs, err := landlock.Parse(annotation)
	if err != nil {
		return "", Errorf(ErrInvalidInput, "annotation %s: %w", AnnotationLandlock, err)
	}
	// Landlock needs no_new_privs (or CAP_SYS_ADMIN). The shim does not
	// set it behind the bundle's back: a bundle that leaves it off wants
	// setuid programs to gain privilege, which a Landlock domain forbids.
	if s.Process == nil || !s.Process.NoNewPrivileges {
		return "", Errorf(ErrInvalidInput, "annotation %s asks for Landlock, which needs process.noNewPrivileges: true; set it (policy-compiled bundles do)", AnnotationLandlock)
	}
	// The shim is the runtime re-executed through /proc/self/exe inside
	// the container.
	if !hasProcMount(s) {
		return "", Errorf(ErrInvalidInput, "annotation %s asks for Landlock, which is applied by an exec shim that needs a proc mount at /proc; add one", AnnotationLandlock)
	}
	abi, err := r.landlockABI()
	if err != nil {
		return "", Errorf(ErrBackendUnavailable, "annotation %s: %w", AnnotationLandlock, err)
	}
	missing := rs.Unsupported(abi)
	if len(missing) == 0 {
		return rs.Encode(), nil
	}
	why := fmt.Sprintf("the host's Landlock ABI %d does not enforce %s, which %s handles", abi, landlock.Describe(missing), AnnotationLandlock)
	if abi == 0 {
		why = "the host has no Landlock (kernel without it, or disabled at boot); " + AnnotationLandlock + " is not enforced at all"
	}
	if err := acceptDegradation(level, p.allow, FeatureLandlock, why); err != nil {
		return "", err
	}
	p.Degraded = append(p.Degraded, FeatureLandlock+": "+why)
	if d := rs.Downgrade(abi); d != nil {
		return d.Encode(), nil
	}
	return "", nil
}

func hasProcMount(s *specs.Spec) bool {
	for _, m := range s.Mounts {
		if strings.TrimRight(m.Destination, "/") == "/proc" && m.Type == "proc" {
			return true
		}
	}
	return false
}

// landlockLaunch is what the pre-launch checks judge of the Landlock shim,
// nil when the plan runs the process without one.
func (r *Runtime) landlockLaunch(cr *created) *hooks.LandlockLaunch {
	if cr.plan.Landlock == "" {
		return nil
	}
	in := &hooks.LandlockLaunch{Ruleset: cr.plan.Landlock}
	in.ABI, in.ABIErr = r.landlockABI()
	if sc, ok := cr.c.(ShimContainer); ok {
		in.LaunchArgs = sc.LaunchArgs()
	}
	return in
}

func (r *Runtime) landlockABI() (int, error) {
	if r.LandlockABI != nil {
		return r.LandlockABI()
	}
	return landlock.HostABI()
}

// watchShim reads, before start, which file the init runs (the runtime's
// clone, which the shim runs too) and returns the post-launch check that
// the process is past the shim: its executable is another file now. A
// FAIL kills the container (125). Without a shim it checks nothing.
func (r *Runtime) watchShim(rec *Record, c Container) (func() error, error) {
	sc, ok := c.(ShimContainer)
	if rec.Landlock == "" || !ok {
		return func() error { return nil }, nil
	}
	clone, err := sc.InitExe()
	if err != nil {
		return nil, fmt.Errorf("read the init's executable: %w", err)
	}
	return func() error {
		now, nowErr := sc.InitExe()
		res := hooks.CheckPastShim(clone, now, nowErr)
		if err := r.Store.auditLocked(AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: rec.Level.String(), Event: "verdicts", Results: []hooks.Result{res}}, true); err != nil {
			return stopAfterFailure(c, fmt.Errorf("start %q: %w", rec.ID, err))
		}
		if res.Verdict == hooks.Fail {
			_ = r.Store.moveLocked(rec, StatePostLaunchFailed, res.String())
			return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "start %q: %s", rec.ID, res))
		}
		return nil
	}, nil
}
