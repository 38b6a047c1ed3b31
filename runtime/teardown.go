package runtime

import (
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hostpolicy"
)

// teardown kills and removes container c and completes the backend's
// receipt with what the core knows: whether the container's pid namespace
// still holds anyone (from the baseline's namespace id, scanned on the
// host), the relay, and the time it took. An error from the backend means
// it could not even look; that is a receipt with a problem, never clean.
// sp is the frozen spec if the caller read and verified it already; nil:
// the teardown reads it where it needs it.
func (r *Runtime) teardown(rec *Record, c Container, sp *specs.Spec) *hooks.Receipt {
	start := time.Now()
	// The monitor first: it must not judge, or kill, a container on its
	// way out.
	monitor := r.stopMonitor(rec)
	receipt, err := c.Teardown()
	if err != nil {
		receipt = &hooks.Receipt{Method: "none", Problems: []string{err.Error()}}
	}
	receipt.Monitor = monitor
	r.relayTeardown(rec, receipt)
	receipt.PidNamespaceGone = r.pidNamespaceGone(rec, receipt)
	if len(receipt.Remaining) == 0 {
		r.quarantine(rec, receipt, sp)
	}
	receipt.Duration = time.Since(start)
	return receipt
}

// quarantine moves aside, once nothing of a policy container runs, what it
// left in the user's files that would run code on the host's git
// (hostpolicy.Planted), and says so: the receipt names each, and a
// warning tells the user now.
func (r *Runtime) quarantine(rec *Record, receipt *hooks.Receipt, sp *specs.Spec) {
	if sp == nil {
		var err error
		if sp, err = r.Store.readSpec(rec); err != nil {
			return
		}
	}
	if !hostpolicy.IsPolicyBundle(sp) {
		return
	}
	moved, err := hostpolicy.Quarantine(sp)
	receipt.Quarantined = moved
	for _, m := range moved {
		r.Warnf("%q left what would run code on your next git command there; moved aside: %s", rec.ID, m)
	}
	if err != nil {
		receipt.Problems = append(receipt.Problems, err.Error())
	}
}

// pidNamespaceGone checks on the host that no process is left in the
// container's own pid namespace. An init (pid 1 of that namespace) that
// has exited is the proof: the kernel makes the namespace's init wait, in
// its exit, until every other process in the namespace is killed and gone
// (zap_pid_ns_processes), a process that setns'd in included. Otherwise
// the host's processes are scanned for one still in the namespace, for up
// to 2 s. The scan costs a stat of every process on the host, which on a
// busy node is thousands.
func (r *Runtime) pidNamespaceGone(rec *Record, receipt *hooks.Receipt) bool {
	pf, ok := r.postFacts()
	if !ok || rec.Baseline == nil || !rec.OwnPidNamespace {
		return len(receipt.Remaining) == 0
	}
	ns, ok := rec.Baseline.Namespaces[string(specs.PIDNamespace)]
	if !ok {
		return len(receipt.Remaining) == 0
	}
	if receipt.InitExited && len(receipt.Remaining) == 0 {
		receipt.PidNamespaceProof = "init-exited"
		return true
	}
	receipt.PidNamespaceProof = "scan"
	deadline := time.Now().Add(2 * time.Second)
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 20*time.Millisecond) {
		pids, err := pf.PidsInNamespace(ns)
		if err != nil {
			receipt.Problems = append(receipt.Problems, "scan for the pid namespace: "+err.Error())
			return false
		}
		if len(pids) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			receipt.Remaining = append(receipt.Remaining, pids...)
			return false
		}
		time.Sleep(delay)
	}
}
