package runtime

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// bootIDFile is the kernel's random id of the running boot: a new one at
// every boot, the same for every reader until the next.
const bootIDFile = "/proc/sys/kernel/random/boot_id"

// ReceiptUnknownAfterReboot is the receipt method of a container whose
// record outlived a reboot (a --root on persistent storage): nothing was
// killed, nothing was looked up by pid; the reboot ended it, and no one
// saw how.
const ReceiptUnknownAfterReboot = "unknown-after-reboot"

// bootID is the current boot's id, "" where it cannot be read (not Linux,
// no /proc). Runtime.BootID replaces it in tests.
func (r *Runtime) bootID() string {
	if r.BootID != nil {
		return r.BootID()
	}
	return hostBootID()
}

// hostBootID reads the boot id once a process: it changes only with a
// reboot, which ends the process too.
var hostBootID = sync.OnceValue(func() string {
	data, err := readNoFollow(bootIDFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
})

// fromAnotherBoot says whether rec was created in an earlier boot of this
// host. Only a positive proof counts — both ids read, and different: a
// record of an older version (no id) or a host where the id cannot be read
// now is judged as before, since taking a live container for a dead one
// would leave it running with its state deleted.
func (r *Runtime) fromAnotherBoot(rec *Record) bool {
	if rec.BootID == "" {
		return false
	}
	now := r.bootID()
	return now != "" && now != rec.BootID
}

// errUnknownAfterReboot refuses an operation on a container from another
// boot. Exit 125: the verified init it names is gone, and the pid recorded
// then may be anyone's now, so nothing may be signalled, started or
// judged through it.
func (r *Runtime) errUnknownAfterReboot(rec *Record) error {
	return Errorf(ErrUnknownAfterReboot, "container %q was created before this host last booted (boot %s, now %s): its state is %s and the pid recorded then is not its process now; only delete removes it", rec.ID, shortBoot(rec.BootID), shortBoot(r.bootID()), ReceiptUnknownAfterReboot)
}

func shortBoot(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// rebootReceipt is the receipt of deleting a container from another boot.
// The cgroup and pid namespace fields are true because neither outlives a
// boot — a fact of the reboot, not of a scan: nothing is looked up by the
// recorded pids or cgroup paths, which may now be another container's.
func rebootReceipt(rec *Record, bootNow string) *hooks.Receipt {
	return &hooks.Receipt{
		Method:           ReceiptUnknownAfterReboot,
		CgroupRemoved:    true,
		PidNamespaceGone: true,
		RelayStopped:     true,
		Note:             fmt.Sprintf("created in boot %s, deleted in boot %s: the reboot ended its processes unseen; not torn down by the runtime", rec.BootID, bootNow),
		Duration:         time.Duration(0),
	}
}
