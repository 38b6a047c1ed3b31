package linux

import (
	"maps"

	"github.com/opencontainers/cgroups"
)

// On cgroup v1, libcontainer's cgroupfs manager finds each controller's
// directory by looking at the host's mounts, and reads the whole mount
// table for every controller the host has not mounted (on this project's
// CI host six of them: about 0.3 ms a lookup). The pre-create check of the
// cgroup (CgroupInUse) already made that lookup for the container, so
// Create hands its result to libcontainer instead of a second lookup —
// only when the cgroup configuration libcontainer gets places the cgroup
// exactly where the checked one did. Any other case (cgroup v2, where the
// lookup is a path join; the systemd driver; a create without a cgroup
// of its own) looks up afresh.

// unifiedMode is cgroups.IsCgroup2UnifiedMode; a test sets it.
var unifiedMode = cgroups.IsCgroup2UnifiedMode

// cgroupLookup is one lookup's result and what it depended on.
type cgroupLookup struct {
	id    string
	where cgroupPlace
	paths map[string]string
}

// cgroupPlace is every field of a cgroup configuration the cgroupfs v1
// manager's lookup reads: the inner path (Path, or Parent and Name), and
// whether a missing devices controller is an error.
type cgroupPlace struct {
	path, parent, name string
	skipDevices        bool
}

// placeOf is cg's place, and false when a lookup for cg is not the
// cgroupfs v1 one (the only one reused).
func placeOf(cg *cgroups.Cgroup) (cgroupPlace, bool) {
	if cg == nil || cg.Systemd || cg.Resources == nil || unifiedMode() {
		return cgroupPlace{}, false
	}
	return cgroupPlace{path: cg.Path, parent: cg.Parent, name: cg.Name, skipDevices: cg.SkipDevices}, true
}

// rememberCgroupPaths keeps the paths a cgroupfs v1 manager looked up for
// cg, the configuration of container id.
func (b *Backend) rememberCgroupPaths(id string, cg *cgroups.Cgroup, paths map[string]string) {
	var l *cgroupLookup
	if where, ok := placeOf(cg); ok && len(paths) > 0 {
		l = &cgroupLookup{id: id, where: where, paths: maps.Clone(paths)}
	}
	b.looked.Store(l)
}

// lookedUpCgroupPaths returns the paths remembered for container id if cg
// places its cgroup where the remembered lookup's did, and nil (look up
// again) otherwise. They are handed out once.
func (b *Backend) lookedUpCgroupPaths(id string, cg *cgroups.Cgroup) map[string]string {
	l := b.looked.Swap(nil)
	if l == nil || l.id != id {
		return nil
	}
	if where, ok := placeOf(cg); !ok || where != l.where {
		return nil
	}
	return maps.Clone(l.paths)
}
