package linux

import (
	"maps"
	"testing"

	"github.com/opencontainers/cgroups"
)

func TestLookedUpCgroupPaths(t *testing.T) {
	defer func(f func() bool) { unifiedMode = f }(unifiedMode)
	checked := func() *cgroups.Cgroup {
		return &cgroups.Cgroup{Path: "/vetto/c1", Resources: &cgroups.Resources{}}
	}
	paths := map[string]string{"devices": "/sys/fs/cgroup/devices/vetto/c1", "memory": "/sys/fs/cgroup/memory/vetto/c1"}
	for _, tc := range []struct {
		name    string
		unified bool
		id      string
		edit    func(*cgroups.Cgroup)
		reused  bool
	}{
		{name: "same id and place", id: "c1", reused: true},
		{name: "resources differ: not part of the place", id: "c1", edit: func(c *cgroups.Cgroup) { c.Resources = &cgroups.Resources{Memory: 1 << 20} }, reused: true},
		{name: "another container", id: "c2"},
		{name: "another path", id: "c1", edit: func(c *cgroups.Cgroup) { c.Path = "/vetto/other" }},
		{name: "parent and name instead of the path", id: "c1", edit: func(c *cgroups.Cgroup) { c.Path, c.Parent, c.Name = "", "/vetto", "c1" }},
		{name: "devices may be missing", id: "c1", edit: func(c *cgroups.Cgroup) { c.SkipDevices = true }},
		{name: "systemd driver", id: "c1", edit: func(c *cgroups.Cgroup) { c.Systemd = true }},
		{name: "no resources", id: "c1", edit: func(c *cgroups.Cgroup) { c.Resources = nil }},
		{name: "cgroup v2", unified: true, id: "c1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unifiedMode = func() bool { return tc.unified }
			var b Backend
			b.rememberCgroupPaths("c1", checked(), paths)
			cg := checked()
			if tc.edit != nil {
				tc.edit(cg)
			}
			got := b.lookedUpCgroupPaths(tc.id, cg)
			if tc.reused != (got != nil) {
				t.Fatalf("reused = %v (%v), want %v", got != nil, got, tc.reused)
			}
			if tc.reused && !maps.Equal(got, paths) {
				t.Fatalf("paths = %v, want %v", got, paths)
			}
			if again := b.lookedUpCgroupPaths(tc.id, cg); again != nil {
				t.Fatalf("handed out twice: %v", again)
			}
		})
	}
	// The remembered map is a copy: libcontainer's manager may write to
	// the one it is given.
	unifiedMode = func() bool { return false }
	var b Backend
	own := maps.Clone(paths)
	b.rememberCgroupPaths("c1", checked(), own)
	own["memory"] = "/elsewhere"
	if got := b.lookedUpCgroupPaths("c1", checked()); got["memory"] != paths["memory"] {
		t.Fatalf("the remembered paths follow the caller's map: %v", got)
	}
}
