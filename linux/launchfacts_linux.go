package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/runc/libcontainer/apparmor"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

var _ runtime.LaunchFacts = (*Backend)(nil)

// AppArmorEnabled reports whether AppArmor confines processes on this host.
func (*Backend) AppArmorEnabled() bool { return apparmor.IsEnabled() }

// CgroupInUse describes the cgroup sp's cgroupsPath names when it exists
// already and holds processes: a container created there would share it
// with them, and its teardown (cgroup.kill) would kill them. It reads the
// paths libcontainer's own cgroup manager would use, creating nothing.
func (b *Backend) CgroupInUse(sp *specs.Spec, id string, systemd bool) (string, error) {
	if sp.Linux == nil {
		return "", nil
	}
	config, err := specconv.CreateCgroupConfig(&specconv.CreateOpts{
		CgroupName: id, UseSystemdCgroup: systemd, Spec: sp,
		RootlessEUID: rootlessEUID(), RootlessCgroups: rootlessCgroups(),
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
	b.rememberCgroupPaths(id, config, paths)
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

// rootlessEUID: the runtime is not root on the host, so libcontainer maps
// ids with newuidmap/newgidmap and never writes a cgroup it was not given.
func rootlessEUID() bool { return os.Geteuid() != 0 }

// rootlessCgroups: no cgroup can be assumed writable — not root, or root
// of a user namespace other than the initial one (inside a rootless
// container manager's container).
func rootlessCgroups() bool { return rootlessEUID() || runtime.InUserNamespace() }

// Cgroups judges, creating nothing, whether a rootless runtime has a cgroup
// for sp: under the systemd driver, a reachable user manager (libcontainer
// asks it over D-Bus for a delegated scope); under cgroupfs, every
// directory libcontainer would create sits below one this user may write
// (a delegated subtree). Root needs no judging.
func (*Backend) Cgroups(sp *specs.Spec, id string, systemd bool) runtime.CgroupAccess {
	if !rootlessCgroups() {
		return runtime.CgroupAccess{}
	}
	out := runtime.CgroupAccess{Rootless: true}
	who := fmt.Sprintf("uid %d", os.Geteuid())
	if runtime.InUserNamespace() {
		who += " of a user namespace"
	}
	if systemd {
		if bus := userBus(); bus == "" {
			out.Unusable = fmt.Sprintf("--systemd-cgroup, but no systemd user manager is reachable for %s ($XDG_RUNTIME_DIR/bus or DBUS_SESSION_BUS_ADDRESS)", who)
		}
		return out
	}
	if sp.Linux == nil {
		out.Unusable = "no linux section"
		return out
	}
	config, err := specconv.CreateCgroupConfig(&specconv.CreateOpts{
		CgroupName: id, Spec: sp, RootlessEUID: rootlessEUID(), RootlessCgroups: true,
	}, nil)
	if err != nil {
		out.Unusable = fmt.Sprintf("no cgroup for %s: %v", who, err)
		return out
	}
	m, err := manager.New(config)
	if err != nil {
		out.Unusable = fmt.Sprintf("no cgroup for %s: %v", who, err)
		return out
	}
	paths := m.GetPaths()
	dirs := make([]string, 0, len(paths))
	for _, dir := range paths {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		if at := unwritableAncestor(dir); at != "" {
			out.Unusable = fmt.Sprintf("no cgroup delegated to %s (%s is not writable)", who, at)
			return out
		}
	}
	return out
}

// unwritableAncestor returns "" when the nearest existing directory at or
// above dir is one this process may create in, and that directory
// otherwise.
func unwritableAncestor(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			if unix.Access(d, unix.W_OK|unix.X_OK) != nil {
				return d
			}
			return ""
		}
		if d == "/" || d == "." {
			return dir
		}
	}
}

// userBus is the session bus libcontainer's systemd driver would dial for
// a rootless caller, "" when there is none to dial.
func userBus() string {
	if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" {
		if path, ok := strings.CutPrefix(addr, "unix:path="); ok {
			path, _, _ = strings.Cut(path, ",")
			if _, err := os.Stat(path); err != nil {
				return ""
			}
		}
		return addr
	}
	if xdg := os.Getenv("XDG_RUNTIME_DIR"); xdg != "" {
		if _, err := os.Stat(filepath.Join(xdg, "bus")); err == nil {
			return "unix:path=" + filepath.Join(xdg, "bus")
		}
	}
	return ""
}
