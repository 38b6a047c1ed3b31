// probeattack is a static test program run as a container's workload: it
// attacks whatever verification process of the runtime it can find in the
// container (the verification issue, 14.1), as a hostile workload would.
//
//	probeattack forge <dir> <seconds>  find a process whose argv holds a
//	                                   canary plan ("connect":"127.0.0.1:PORT"),
//	                                   stop it, rewrite PORT in its argv
//	                                   through /proc/<pid>/mem to a closed
//	                                   port, resume it
//	probeattack kill <dir> <seconds>   SIGKILL every process whose argv[1]
//	                                   is "probe"
//
// It writes <dir>/started first (the workload ran), and one line to
// <dir>/hits for each process it got at.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: probeattack forge|kill <dir> <seconds>")
		os.Exit(2)
	}
	mode, dir := os.Args[1], os.Args[2]
	secs, _ := strconv.Atoi(os.Args[3])
	_ = os.WriteFile(filepath.Join(dir, "started"), []byte("1"), 0o644)
	hits, err := os.OpenFile(filepath.Join(dir, "hits"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	done := map[int]bool{}
	self := os.Getpid()
	for deadline := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(deadline); {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self || done[pid] {
				continue
			}
			cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil {
				continue
			}
			args := strings.Split(string(cmdline), "\x00")
			switch {
			case mode == "kill" && len(args) > 1 && args[1] == "probe":
				if unix.Kill(pid, unix.SIGKILL) == nil {
					fmt.Fprintf(hits, "killed %d\n", pid)
					done[pid] = true
				}
			case mode == "forge" && bytes.Contains(cmdline, []byte(`"connect":"127.0.0.1:`)):
				if err := forge(pid); err != nil {
					fmt.Fprintf(hits, "forge %d failed: %v\n", pid, err)
				} else {
					fmt.Fprintf(hits, "forged %d\n", pid)
				}
				done[pid] = true
			}
		}
	}
}

// forge stops pid, replaces the digits of the port after
// "connect":"127.0.0.1: in its argv with a closed port of the same
// length, and resumes it.
func forge(pid int) error {
	if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
		return err
	}
	defer unix.Kill(pid, unix.SIGCONT)
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return err
	}
	// Fields after the command name; arg_start and arg_end are fields 48
	// and 49 of proc(5), so 46 and 47 counted from the state (field 3).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 48 {
		return fmt.Errorf("short stat")
	}
	start, _ := strconv.ParseInt(f[45], 10, 64)
	end, _ := strconv.ParseInt(f[46], 10, 64)
	mem, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	buf := make([]byte, end-start)
	if _, err := mem.ReadAt(buf, start); err != nil {
		return err
	}
	key := []byte(`"connect":"127.0.0.1:`)
	i := bytes.Index(buf, key)
	if i < 0 {
		return fmt.Errorf("no plan in argv")
	}
	j := i + len(key)
	k := j
	for k < len(buf) && buf[k] >= '0' && buf[k] <= '9' {
		k++
	}
	port := bytes.Repeat([]byte("0"), k-j)
	port[len(port)-1] = '1' // port 1: nothing listens there
	_, err = mem.WriteAt(port, start+int64(j))
	return err
}
