//go:build darwin

package darwin

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// sZomb is p_stat of a process that exited and was not reaped yet
// (sys/proc.h).
const sZomb = 5

func procOf(k *unix.KinfoProc) proc {
	return proc{
		pid:    int(k.Proc.P_pid),
		ppid:   int(k.Eproc.Ppid),
		pgid:   int(k.Eproc.Pgid),
		start:  k.Proc.P_starttime.Sec*1_000_000 + int64(k.Proc.P_starttime.Usec),
		zombie: k.Proc.P_stat == sZomb,
	}
}

var errNoProcess = errors.New("no such process")

// procInfo reads pid from kern.proc.pid.
func procInfo(pid int) (proc, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		// A pid that does not exist returns no record, which x/sys
		// reports as a short read.
		if errors.Is(err, unix.EIO) || errors.Is(err, unix.ESRCH) {
			return proc{}, errNoProcess
		}
		return proc{}, fmt.Errorf("kern.proc.pid %d: %w", pid, err)
	}
	if int(k.Proc.P_pid) != pid {
		return proc{}, errNoProcess
	}
	return procOf(k), nil
}

// allProcs is the whole process table (kern.proc.all).
func allProcs() ([]proc, error) {
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("kern.proc.all: %w", err)
	}
	out := make([]proc, 0, len(ks))
	for i := range ks {
		out = append(out, procOf(&ks[i]))
	}
	return out, nil
}
