package linux

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// teardownLimit bounds the wait for a killed cgroup to empty. SIGKILL
// cannot be caught, so only a process stuck in the kernel (D state, a
// hung NFS mount) outlives it — and that is what the receipt is for.
const teardownLimit = 10 * time.Second

// pollCeiling bounds the interval of the waits below: a killed cgroup
// empties in a few milliseconds, and a doubling interval with a high
// ceiling would overshoot that by as much again. Each poll is a couple of
// small file reads.
const pollCeiling = time.Millisecond

// Teardown kills the container through its cgroups, with libcontainer's
// cgroup manager (opencontainers/cgroups) and nothing else:
//
//   - a cgroup v2 directory (pure v2, or the "unified" one of a hybrid
//     host) with cgroup.kill: freeze, count, write "1" to cgroup.kill,
//     thaw. The kernel kills every process in the subtree in one step, so
//     a fork storm cannot outrun it.
//   - pure cgroup v1 (no unified directory): freeze with the v1 freezer so
//     nothing can fork, SIGKILL every pid listed, thaw (a frozen v1 task
//     dies when thawed). Without a freezer the list can race forks; the
//     wait below catches what that misses and the receipt counts it.
//
// The count is taken frozen, so it is what the kill hit. Then it waits for
// the cgroup to report itself empty ("populated 0" in cgroup.events on v2,
// an empty pid list on v1), reaps the init if it is our child, and has
// libcontainer destroy the cgroups and its state.
func (c *container) Teardown() (*hooks.Receipt, error) {
	rec := &hooks.Receipt{Method: "none"}
	st, err := c.state()
	if err != nil {
		return nil, mapErr(err)
	}
	m, err := manager.NewWithPaths(c.lc.Config().Cgroups, st.CgroupPaths)
	if err != nil {
		return nil, fmt.Errorf("teardown %q: cgroup manager: %w", c.ID(), err)
	}
	problem := func(format string, args ...any) {
		rec.Problems = append(rec.Problems, fmt.Sprintf(format, args...))
	}
	// The hierarchies the proof below also looks in are read from the
	// mount table while the kill, the waits and libcontainer's destroy
	// run: nothing of theirs changes it, and a run's exit waits for this
	// teardown.
	var mounted <-chan []string
	if p := c.lc.Config().Cgroups.Path; p != "" {
		ch := make(chan []string, 1)
		go func() { ch <- cgroupDirsOf(p) }()
		mounted = ch
	}
	if m.Exists() {
		killed, method, err := killCgroup(m)
		rec.Killed, rec.Method = killed, method
		if err != nil {
			problem("kill %q: %v", c.ID(), err)
		}
		remaining, err := waitEmpty(m, teardownLimit)
		if err != nil {
			problem("wait for %q to empty: %v", c.ID(), err)
		}
		rec.Remaining = remaining
	} else if rootlessCgroups() && len(c.CgroupPaths()) == 0 {
		// Created in no cgroup (rootless, no delegation): SIGKILL to the
		// init of its own pid namespace makes the kernel kill every
		// process in it; the core's /proc scan of that namespace is the
		// proof (PidNamespaceGone, Remaining).
		pids, err := c.namespaceProcesses()
		if err != nil {
			problem("list %q by its pid namespace: %v", c.ID(), err)
		}
		rec.Killed, rec.Method = len(pids), "pid-namespace"
		if err := c.lc.Signal(unix.SIGKILL); err != nil && !errors.Is(mapErr(err), runtime.ErrNotRunning) {
			problem("kill init of %q: %v", c.ID(), err)
		}
	} else if err := c.lc.Signal(unix.SIGKILL); err != nil && !errors.Is(mapErr(err), runtime.ErrNotRunning) {
		// No cgroup (it was removed under us): the init is all we know.
		problem("kill init of %q: %v", c.ID(), err)
	}
	if len(rec.Remaining) > 0 {
		// Destroying state now would lose track of live processes; keep
		// everything so that delete --force can try again.
		return rec, nil
	}
	// The init is gone once libcontainer sees it stopped; ours (a run, a
	// create that failed) is reaped only then, so this never blocks on a
	// process that cannot finish exiting.
	if err := waitInitGone(c, teardownLimit); err != nil {
		problem("%v", err)
		return rec, nil
	}
	rec.InitExited = true
	if c.proc != nil {
		_, _ = c.proc.Wait()
		c.proc = nil
	}
	if err := c.lc.Destroy(); err != nil {
		problem("destroy %q: %v", c.ID(), mapErr(err))
	}
	rec.CgroupRemoved = true
	// Every claim checked: the cgroups libcontainer recorded, and the
	// container's path in every cgroup hierarchy mounted here (a create
	// interrupted before its state named them all left a cpuset one).
	dirs := slices.Collect(maps.Values(st.CgroupPaths))
	if mounted != nil {
		dirs = append(dirs, <-mounted...)
	}
	slices.Sort(dirs)
	for _, dir := range slices.Compact(dirs) {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			rec.CgroupRemoved = false
			problem("cgroup %s still exists", dir)
		}
	}
	return rec, nil
}

// cgroupDirsOf is path in every cgroup and cgroup2 hierarchy this
// process's mount table shows.
func cgroupDirsOf(path string) []string {
	data, err := hooks.ReadKernelFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		left, right, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fstype, _, _ := strings.Cut(right, " ")
		f := strings.Fields(left)
		if len(f) < 5 || (fstype != "cgroup" && fstype != "cgroup2") {
			continue
		}
		out = append(out, filepath.Join(f[4], path))
	}
	return out
}

// killCgroup kills every process of m's cgroups and says how many there
// were and how.
func killCgroup(m cgroups.Manager) (int, string, error) {
	pids, err := m.GetAllPids()
	if cgroupGone(err) {
		// Removed under us: systemd stops a transient scope, and removes
		// its cgroup, once its last process exits. Empty; waitEmpty and
		// the pid-namespace scan prove it.
		return 0, "none", nil
	}
	if err != nil {
		return 0, "none", err
	}
	if len(pids) == 0 {
		return 0, "none", nil
	}
	// cgroup.kill is one step the kernel applies to every process of the
	// tree, forks included: nothing to freeze first. (Freezing first
	// cost a wait for "frozen 1", which libcontainer bounds at 10 s; one
	// that timed out under a slow guest left cgroup.freeze at 1, and every
	// `state` after it waited 10 s for a freeze that never came.)
	if dir := m.Path(""); dir != "" {
		err := cgroups.WriteFile(dir, hooks.CgroupKillFile, "1")
		if err == nil {
			return len(pids), "cgroup.kill", nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return 0, "cgroup.kill", err
		}
		// A kernel before 5.14: no cgroup.kill; freeze and signal each.
	}
	// Frozen, nothing forks between the count and the kill. A freeze that
	// failed (or timed out half-way) is undone all the same.
	frozen := m.Freeze(cgroups.Frozen) == nil
	thaw := func() { _ = m.Freeze(cgroups.Thawed) }
	if frozen {
		if pids, err = m.GetAllPids(); err != nil {
			thaw()
			return 0, "none", err
		}
	}
	method := "sigkill-each"
	if frozen {
		method = "sigkill-frozen"
	}
	var errs []error
	for _, pid := range pids {
		if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("kill pid %d: %w", pid, err))
		}
	}
	thaw()
	return len(pids), method, errors.Join(errs...)
}

// waitEmpty polls until m's cgroups hold no process, and returns the pids
// still there when limit ran out. On v2 the kernel's own "populated 0"
// (cgroup.events) is the fact; on v1 the pid lists.
func waitEmpty(m cgroups.Manager, limit time.Duration) ([]int, error) {
	unified := m.Path("")
	deadline := time.Now().Add(limit)
	for delay := 50 * time.Microsecond; ; delay = min(2*delay, pollCeiling) {
		empty := false
		if unified != "" {
			ev, err := cgroups.ReadFile(unified, "cgroup.events")
			if err != nil {
				if cgroupGone(err) {
					empty = true // the cgroup itself is gone
				} else {
					return nil, err
				}
			}
			empty = empty || strings.Contains(ev, "populated 0")
		}
		pids, err := m.GetAllPids()
		if err != nil && !cgroupGone(err) {
			return nil, err
		}
		if (unified == "" || empty) && len(pids) == 0 {
			return nil, nil
		}
		if time.Now().After(deadline) {
			slices.Sort(pids)
			return pids, nil
		}
		pause(delay)
	}
}

// waitInitGone waits until libcontainer sees the init stopped (its pid
// dead, or a zombie), which Destroy requires. While it waits it reaps
// every exited child of this process other than the init: a run is a
// child subreaper, so a process that joined the container from outside
// (an exec whose caller died) is re-parented here when its parent goes,
// and an init that is pid 1 of its namespace cannot finish exiting
// (zap_pid_ns_processes) until every such zombie in the namespace is
// reaped. A wait that runs out says what the init is doing.
func waitInitGone(c *container, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for delay := 50 * time.Microsecond; ; delay = min(2*delay, pollCeiling) {
		if c.proc != nil {
			reapStrays(c.InitPid())
		}
		st, err := c.Status()
		if err != nil {
			return err
		}
		if st == runtime.StatusStopped {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("init of %q (pid %d) still there after %s: %s", c.ID(), c.InitPid(), limit, taskState(c.InitPid()))
		}
		pause(delay)
	}
}

// reapStrays collects this process's exited children, except init (left
// for its own Wait), without blocking. The children are listed from
// /proc/self/task/*/children: a child belongs to the thread that forked
// it, or to whichever thread of a subreaper it was re-parented to.
func reapStrays(init int) {
	// One look first: with no child waitable (the usual case: the init
	// reaped already by its Wait, nothing re-parented here), there is
	// nothing to list. WNOWAIT leaves whatever it finds for the list;
	// with none, Linux returns the siginfo zeroed (no SIGCHLD in it).
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
	if errors.Is(err, unix.ECHILD) || (err == nil && info.Signo == 0) {
		return
	}
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		data, err := hooks.ReadKernelFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(f)
			if err != nil || pid == init {
				continue
			}
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// taskState is the state line of /proc/<pid>/status and its kernel wait
// channel: what a process that will not go away is doing.
func taskState(pid int) string {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "gone"
	}
	state := "state unknown"
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "State:"); ok {
			state = "state " + strings.TrimSpace(v)
		}
	}
	if wchan, err := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid)); err == nil && len(wchan) > 0 && string(wchan) != "0" {
		state += ", waiting in " + string(wchan)
	}
	return state
}

// cgroupGone says err is a read of a cgroup that no longer exists: gone
// (ENOENT), or removed while the read was on its way (ENODEV, what the
// kernel answers for a file of a cgroup being destroyed).
func cgroupGone(err error) bool {
	return err != nil && (errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENODEV))
}
