package launch

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// Limits are a container's memory and pids limits as they stand: the
// frozen spec's, changed by audited updates since.
type Limits struct {
	Memory *int64 `json:"memory,omitempty"`
	Pids   *int64 `json:"pids,omitempty"`
}

// UpdateRequest is one `update` of a running container.
type UpdateRequest struct {
	// Level is the container's level; Allow what the update's caller
	// accepts (--allow-degraded).
	Level Level
	Allow map[Feature]bool
	// Current are the limits before the update, New what it sets.
	Current Limits
	New     *specs.LinuxResources
}

// Update decides an update: it may raise or lower a limit (the operator's
// call, audited), but removing a memory or pids limit the container has is
// a degradation of limits: refused at strict, at standard only when the
// caller accepts it, recorded at degraded. It returns the accepted
// degradations and the violations.
func Update(req UpdateRequest, floor *Floor) (*Decision, Limits) {
	d := &Decision{Level: req.Level, floor: floor, Allow: req.Allow}
	var v violations
	next := req.Current
	r := req.New
	if r != nil {
		unifiedInterface(r.Unified, &v)
	}
	// The limits as the update writes them: cgroup v2's unified
	// memory.max and pids.max, written last, decide over the typed fields.
	// The caller has refused a unified value that is no limit.
	// And as libcontainer writes them: a typed memory limit of 0 is no
	// write at all (runc's "unchanged"), a typed pids limit of 0 is
	// pids.max 1 (spec.PidsLimit). Recorded as 0, either dropped the
	// limit's check from verification while the cgroup kept a limit.
	if m, _ := spec.MemoryLimit(r); m != nil && (*m != 0 || unifiedSets(r, spec.UnifiedMemoryMax)) {
		next.Memory = m
		if spec.MemoryUnbounded(*m) && spec.MemoryBounded(req.Current.Memory) {
			d.removeLimit("memory", &v)
		}
	}
	if p, _ := spec.PidsLimit(r); p != nil {
		next.Pids = p
		if spec.PidsUnbounded(*p) && spec.PidsBounded(req.Current.Pids) {
			d.removeLimit("pids", &v)
		}
	}
	d.Violations = v.list
	return d, next
}

// unifiedSets: r's unified map names key.
func unifiedSets(r *specs.LinuxResources, key string) bool {
	_, ok := r.Unified[key]
	return ok
}

// removeLimit judges an update that removes a limit.
func (d *Decision) removeLimit(which string, v *violations) {
	why := "the update removes the container's " + which + " limit"
	switch {
	case d.floor.forbidsDegradation(FeatureLimits):
		v.add(RuleFloorDegradations, "%s; %s forbids degrading limits", why, d.floor.name())
	case d.Level == Strict:
		v.add(RuleUpdateRemovesLimit, "%s; level strict requires it", why)
	case d.Level == Standard && !d.Allow[FeatureLimits]:
		v.addRemedy(RuleUpdateRemovesLimit, "set a limit instead of -1, max or a value no machine reaches (4 EiB of memory, 4194304 pids), or accept the removal with --allow-degraded=limits", "%s; refused at level standard", why)
	default:
		d.Degraded = append(d.Degraded, Degradation{Feature: FeatureLimits, Reason: why})
	}
}

func clone(p *int64) *int64 {
	v := *p
	return &v
}

// LimitsOf are the limits an effective spec sets.
func LimitsOf(s *specs.Spec) Limits {
	var l Limits
	if m := memoryLimit(s); m != nil {
		l.Memory = clone(m)
	}
	if p := pidsLimit(s); p != nil {
		l.Pids = clone(p)
	}
	return l
}
