package linux

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/runc/libcontainer/apparmor"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

var _ runtime.LaunchFacts = (*Backend)(nil)

// AppArmorEnabled reports whether AppArmor confines processes on this host.
func (*Backend) AppArmorEnabled() bool { return apparmor.IsEnabled() }

// CgroupInUse describes the cgroup sp's cgroupsPath names when it exists
// already and holds processes: a container created there would share it
// with them, and its teardown (cgroup.kill) would kill them. It reads the
// paths libcontainer's own cgroup manager would use, creating nothing.
func (*Backend) CgroupInUse(sp *specs.Spec, id string, systemd bool) (string, error) {
	if sp.Linux == nil {
		return "", nil
	}
	config, err := specconv.CreateCgroupConfig(&specconv.CreateOpts{
		CgroupName: id, UseSystemdCgroup: systemd, Spec: sp,
		RootlessEUID: os.Geteuid() != 0, RootlessCgroups: os.Geteuid() != 0,
	}, nil)
	if err != nil {
		// The backend refuses the same spec with its own error at create.
		return "", nil
	}
	m, err := manager.New(config)
	if err != nil {
		return "", nil
	}
	paths := m.GetPaths()
	controllers := make([]string, 0, len(paths))
	for c := range paths {
		controllers = append(controllers, c)
	}
	sort.Strings(controllers)
	var busy []string
	for _, c := range controllers {
		dir := paths[c]
		if _, err := os.Stat(dir); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return "", fmt.Errorf("cgroup %s: %w", dir, err)
		}
		pids, err := cgroups.GetAllPids(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("cgroup %s: %w", dir, err)
		}
		if len(pids) > 0 {
			busy = append(busy, fmt.Sprintf("%s (%d processes, e.g. pid %d)", dir, len(pids), pids[0]))
		}
	}
	if len(busy) == 0 {
		return "", nil
	}
	return "linux.cgroupsPath " + sp.Linux.CgroupsPath + " names cgroups that exist and hold processes: " + strings.Join(busy, ", "), nil
}
