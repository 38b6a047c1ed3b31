package darwin

import "slices"

// proc is what the host's process table says of one process.
type proc struct {
	pid, ppid, pgid int
	start           int64 // microseconds since the epoch
	zombie          bool
}

// members are the live processes of the container whose init is pid
// (started at start) in table: its process group, which is pid's own,
// and every descendant of the init by parent links. Without a pid
// namespace that is all the host can see: a process that left the group
// (setpgid, setsid) and whose parent died is reparented to launchd and is
// no longer found (degraded-cleanup). A group id outlives its leader and
// is not reused while the group lives, so members of the group are found
// even after the init exited; descendants only while the init is the one
// recorded (pids are reused).
func members(table []proc, pid int, start int64) []int {
	children := map[int][]int{}
	initAlive, reused := false, false
	for _, p := range table {
		if p.pid == pid && p.start != start {
			// darwin reuses no pid while a group of that id lives: the
			// group is gone, and whoever has the id now is a stranger.
			reused = true
		}
		if p.zombie {
			continue
		}
		children[p.ppid] = append(children[p.ppid], p.pid)
		if p.pid == pid && p.start == start {
			initAlive = true
		}
	}
	if reused {
		return nil
	}
	seen := map[int]bool{}
	var out []int
	add := func(n int) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, p := range table {
		if !p.zombie && p.pgid == pid {
			add(p.pid)
		}
	}
	if initAlive {
		add(pid)
		for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
			for _, c := range children[queue[0]] {
				if !seen[c] {
					add(c)
					queue = append(queue, c)
				}
			}
		}
	}
	// Descendants of descendants found through the group.
	for changed := true; changed; {
		changed = false
		for _, n := range slices.Clone(out) {
			for _, c := range children[n] {
				if !seen[c] {
					add(c)
					changed = true
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
