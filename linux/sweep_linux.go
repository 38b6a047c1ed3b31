package linux

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// Sweep removes what a create that died before libcontainer recorded its
// state may have left: processes in the container's cgroups, which never
// ran the user's process (killed, as delete kills a created container),
// and the cgroups themselves. The cgroups are found from the
// frozen spec exactly as libcontainer derived them at create.
func (b *Backend) Sweep(id string, sp *specs.Spec) (int, error) {
	if sp.Linux == nil {
		return 0, nil
	}
	cg, err := specconv.CreateCgroupConfig(&specconv.CreateOpts{CgroupName: id, Spec: sp}, nil)
	if err != nil {
		return 0, fmt.Errorf("sweep %q: cgroup config: %w", id, err)
	}
	m, err := manager.New(cg)
	if err != nil {
		return 0, fmt.Errorf("sweep %q: %w", id, err)
	}
	// Every controller's directory, not m.Exists(): on cgroup v1 that
	// looks at the devices controller only, and libcontainer makes the
	// cpuset directory first — a create killed in between left a cpuset
	// cgroup the sweep skipped while its receipt said the cgroups were
	// removed. Its init may sit in that one cgroup alone, so each
	// directory's processes are looked for.
	paths := m.GetPaths()
	killed := 0
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := pidsIn(paths)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if unix.Kill(pid, unix.SIGKILL) == nil {
				killed++
			}
		}
		if time.Now().After(deadline) {
			return killed, runtime.Errorf(runtime.ErrTeardownIncomplete, "sweep %q: processes %v survive SIGKILL", id, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := m.Destroy(); err != nil {
		return killed, runtime.Errorf(runtime.ErrTeardownIncomplete, "sweep %q: remove cgroups: %w", id, err)
	}
	// The receipt says the cgroups are gone: checked, not assumed.
	var left []string
	for _, c := range slices.Sorted(maps.Keys(paths)) {
		if _, err := os.Stat(paths[c]); err == nil {
			left = append(left, paths[c])
		}
	}
	if len(left) > 0 {
		return killed, runtime.Errorf(runtime.ErrTeardownIncomplete, "sweep %q: cgroups not removed: %s", id, strings.Join(left, ", "))
	}
	return killed, nil
}

// pidsIn lists the processes in the cgroup directories paths (and below
// them) that exist; the same process in several controllers is listed
// once.
func pidsIn(paths map[string]string) []int {
	seen := map[int]bool{}
	var out []int
	for _, dir := range paths {
		pids, err := cgroups.GetAllPids(dir)
		if err != nil {
			continue // missing: never made, or already removed
		}
		for _, pid := range pids {
			if !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	sort.Ints(out)
	return out
}
