package relayproc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"

	"github.com/vetto-dev/vetto-runtime/landlock"
)

// harden takes from the relay process everything it does not need to
// serve the sockets it already holds, in this order, on every thread (a
// Go process runs code on many):
//
//  1. no_new_privs: nothing it could exec gains privilege.
//
//  2. The capability bounding and ambient sets emptied. This comes before
//     the uid change, because emptying the bounding set needs
//     CAP_SETPCAP, which the change takes away.
//
//     Both are done by a constructor before the Go runtime starts any
//     thread (relay_early_linux.go), so every thread inherits them; harden
//     checks that it ran.
//
//  3. No supplementary groups; setresgid and setresuid to uid (never 0),
//     with the Go runtime's all-thread calls. With every uid non-zero the
//     kernel clears the permitted and effective sets.
//
//  4. capset to nothing on every thread (libpsx, whose all-thread calls
//     work with cgo), and a check on each thread that every set is empty,
//     every id is uid and no_new_privs is on.
//
//  5. Landlock with every file-system right handled and none granted
//     (landlock.RestrictProcess): no file can be opened any more.
//
//  6. The seccomp allowlist (relayFilter), on every thread (TSYNC).
//
// Any failure is returned, and the relay then refuses to serve.
func harden(uid uint32, filter *libseccomp.ScmpFilter) error {
	if uid == 0 {
		return errors.New("the relay never runs as root: uid 0")
	}
	if err := earlyHardening(); err != nil {
		return err
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	id := int(uid)
	if err := syscall.Setresgid(id, id, id); err != nil {
		return fmt.Errorf("setresgid %d: %w", id, err)
	}
	if err := syscall.Setresuid(id, id, id); err != nil {
		return fmt.Errorf("setresuid %d: %w", id, err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	if err := checkDropped(uid); err != nil {
		return err
	}
	if _, err := landlock.RestrictProcess(); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if err := filter.Load(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// checkDropped reads every thread's status (the last files this process
// opens) and refuses unless each runs as uid with no capability and
// no_new_privs. The runtime checks the same from the host, with the
// seccomp mode, once the relay says it is ready.
func checkDropped(uid uint32) error {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	want := strconv.Itoa(int(uid))
	for _, e := range entries {
		data, err := os.ReadFile("/proc/self/task/" + e.Name() + "/status")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			key, val, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			f := strings.Fields(val)
			switch key {
			case "Uid", "Gid":
				for _, v := range f {
					if v != want {
						return fmt.Errorf("thread %s: %s %s", e.Name(), key, val)
					}
				}
			case "Groups":
				if len(f) > 0 {
					return fmt.Errorf("thread %s: groups %s", e.Name(), val)
				}
			case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
				// CapBnd and CapAmb too: the constructor emptied them on
				// the first thread, and every other must have inherited it.
				if n, err := strconv.ParseUint(strings.TrimSpace(val), 16, 64); err != nil || n != 0 {
					return fmt.Errorf("thread %s: %s %s", e.Name(), key, strings.TrimSpace(val))
				}
			case "NoNewPrivs":
				if strings.TrimSpace(val) != "1" {
					return fmt.Errorf("thread %s: no_new_privs %s", e.Name(), strings.TrimSpace(val))
				}
			}
		}
	}
	return nil
}
