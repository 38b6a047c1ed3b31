package hooks

import (
	"fmt"
	"strings"
	"time"
)

// Receipt is what a teardown did (docs/verification.md): how many processes it
// killed, how many are left, whether the cgroups and the pid namespace are
// gone and the relay stopped. Every field is a host fact read after the
// kill, never an assumption that a kill worked.
type Receipt struct {
	// Method is how the processes were killed: "cgroup.kill" (one write,
	// atomic against forks), "sigkill-frozen" (v1: freeze, signal each,
	// thaw), "none" (the cgroup was already empty), "pid-namespace"
	// (no cgroup: the namespace's init killed), "sweep" (an interrupted
	// create's cgroups) or "unknown-after-reboot" (the record outlived a
	// reboot: nothing killed, nothing looked up by pid).
	Method string `json:"method"`
	Killed int    `json:"killed"`
	// Remaining are the pids still in the container's cgroups, or still in
	// its pid namespace, when the teardown gave up waiting.
	Remaining     []int `json:"remaining"`
	CgroupRemoved bool  `json:"cgroup_removed"`
	// PidNamespaceGone: no process is left in the container's own pid
	// namespace (true when it had none of its own and its cgroup is empty).
	PidNamespaceGone bool `json:"pid_namespace_gone"`
	// InitExited: the backend saw the container's init exit (stopped or a
	// zombie), after the kill. For an init that is pid 1 of the
	// container's own pid namespace that is the proof the namespace is
	// empty: the kernel lets it exit only once it has killed and waited for
	// every other process in it (zap_pid_ns_processes).
	InitExited bool `json:"init_exited,omitempty"`
	// PidNamespaceProof says what PidNamespaceGone rests on: "init-exited"
	// (the above), "scan" (no process on the host is in the namespace) or
	// "" (the container had no pid namespace of its own).
	PidNamespaceProof string `json:"pid_namespace_proof,omitempty"`
	// RelayStopped: no egress relay of this container runs, checked on
	// the host (true for a container that had none).
	RelayStopped bool `json:"relay_stopped"`
	// Relay is what the relay counted over the container's life (its
	// last stats file), nil for a container without one.
	Relay    *RelayStats   `json:"relay,omitempty"`
	Duration time.Duration `json:"duration"`
	// Monitor is what the container's monitor did, and that it is gone;
	// nil for a container that had none (--no-verify, another platform).
	Monitor *MonitorReceipt `json:"monitor,omitempty"`
	// Quarantined are what a policy sandbox left that would run code on
	// the host's git (a new repository, a commondir), moved aside, each
	// "from -> to". It does not make a teardown incomplete: it is done.
	Quarantined []string `json:"quarantined,omitempty"`
	// Note says what the fields rest on when they are not a scan of this
	// teardown (unknown-after-reboot: the reboot, not a kill, ended it).
	Note string `json:"note,omitempty"`
	// Problems are the errors met on the way; any makes the teardown
	// incomplete.
	Problems []string `json:"problems,omitempty"`
}

// MonitorReceipt is the monitor's part of a teardown.
type MonitorReceipt struct {
	Pid int `json:"pid"`
	// Rounds of checks it ran; Kills, containers it killed on a FAIL (0
	// or 1).
	Rounds int `json:"rounds"`
	Kills  int `json:"kills"`
	// Stopped: the monitor process is gone.
	Stopped bool `json:"stopped"`
}

// Clean reports whether the teardown left nothing behind.
func (r *Receipt) Clean() bool {
	return len(r.Remaining) == 0 && r.CgroupRemoved && r.PidNamespaceGone && r.RelayStopped && (r.Monitor == nil || r.Monitor.Stopped) && len(r.Problems) == 0
}

// String says what is left, for the TeardownIncomplete error.
func (r *Receipt) String() string {
	var left []string
	if len(r.Remaining) > 0 {
		left = append(left, fmt.Sprintf("processes %v still alive", r.Remaining))
	}
	if !r.CgroupRemoved {
		left = append(left, "cgroups not removed")
	}
	if !r.PidNamespaceGone {
		left = append(left, "pid namespace still populated")
	}
	if !r.RelayStopped {
		left = append(left, "relay still running")
	}
	if r.Monitor != nil && !r.Monitor.Stopped {
		left = append(left, fmt.Sprintf("monitor pid %d still running", r.Monitor.Pid))
	}
	left = append(left, r.Problems...)
	if len(left) == 0 {
		return fmt.Sprintf("clean: killed %d by %s in %s", r.Killed, r.Method, r.Duration)
	}
	return fmt.Sprintf("killed %d by %s, but %s", r.Killed, r.Method, strings.Join(left, "; "))
}
