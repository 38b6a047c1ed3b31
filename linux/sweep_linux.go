package linux

import (
	"fmt"
	"time"

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
	if !m.Exists() {
		return 0, nil
	}
	killed := 0
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids, err := m.GetAllPids()
		if err != nil || len(pids) == 0 {
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
	return killed, nil
}
