// sysprobe is a static test program the integration tests bind into
// containers. It issues raw system calls and prints what the kernel (or
// the seccomp filter, or Landlock) answered, one "name RESULT" line each,
// RESULT being OK or the errno's name.
//
//	sysprobe syscalls                       the seccomp table (seccomp_test.go)
//	sysprobe handle-read <dir> <type> <hex> open_by_handle_at on dir's filesystem, read
//	sysprobe notify <message>               one datagram to $NOTIFY_SOCKET (sd_notify)
//
// Arguments are chosen so that a call that reaches the kernel fails with
// an errno other than the filter's (EFAULT, EBADF, EINVAL, …) or succeeds
// harmlessly: the same table run without the filter is the control that
// shows the filter, not the kernel, refused.
package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

type call struct {
	name string
	nr   uintptr
	args [6]uintptr
}

const (
	cloneNewNS   = 0x00020000
	cloneNewUser = 0x10000000
	cloneFS      = 0x00000200
	invalid      = ^uintptr(0)
)

func calls() []call {
	empty := uintptr(unsafe.Pointer(&[]byte{0}[0]))
	return []call{
		// Other processes' memory and debugging.
		{"ptrace", unix.SYS_PTRACE, [6]uintptr{0x7fffffff, 0}},
		{"process_vm_readv", unix.SYS_PROCESS_VM_READV, [6]uintptr{0, 0, 0, 0, 0, 1}},
		{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV, [6]uintptr{0, 0, 0, 0, 0, 1}},
		{"pidfd_getfd", unix.SYS_PIDFD_GETFD, [6]uintptr{invalid, 0, 0}},
		{"kcmp", unix.SYS_KCMP, [6]uintptr{0, 0, 0xff, 0, 0}},
		// io_uring, userfaultfd, bpf, perf.
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, [6]uintptr{0, 0}},
		{"io_uring_enter", unix.SYS_IO_URING_ENTER, [6]uintptr{invalid, 0, 0, 0, 0, 0}},
		{"io_uring_register", unix.SYS_IO_URING_REGISTER, [6]uintptr{invalid, 0, 0, 0}},
		// UFFD_USER_MODE_ONLY passes the unprivileged check; bit 1 is invalid.
		{"userfaultfd", unix.SYS_USERFAULTFD, [6]uintptr{1 | 2}},
		{"bpf", unix.SYS_BPF, [6]uintptr{0xffff, 0, 0}},
		{"perf_event_open", unix.SYS_PERF_EVENT_OPEN, [6]uintptr{0, 0, invalid, invalid, 0}},
		// The kernel itself.
		{"kexec_load", unix.SYS_KEXEC_LOAD, [6]uintptr{0, 0, 0, invalid}},
		{"kexec_file_load", unix.SYS_KEXEC_FILE_LOAD, [6]uintptr{invalid, invalid, 0, 0, invalid}},
		{"init_module", unix.SYS_INIT_MODULE, [6]uintptr{0, 0, 0}},
		{"finit_module", unix.SYS_FINIT_MODULE, [6]uintptr{invalid, empty, 0}},
		{"delete_module", unix.SYS_DELETE_MODULE, [6]uintptr{0, 0}},
		// Mounts.
		{"mount", unix.SYS_MOUNT, [6]uintptr{0, 0, 0, 0, 0}},
		{"umount2", unix.SYS_UMOUNT2, [6]uintptr{empty, invalid}},
		{"pivot_root", unix.SYS_PIVOT_ROOT, [6]uintptr{0, 0}},
		{"move_mount", unix.SYS_MOVE_MOUNT, [6]uintptr{invalid, empty, invalid, empty, invalid}},
		{"fsopen", unix.SYS_FSOPEN, [6]uintptr{0, 0}},
		{"fsconfig", unix.SYS_FSCONFIG, [6]uintptr{invalid, 0, 0, 0, 0}},
		{"fsmount", unix.SYS_FSMOUNT, [6]uintptr{invalid, 0, 0}},
		{"fspick", unix.SYS_FSPICK, [6]uintptr{invalid, empty, invalid}},
		{"open_tree", unix.SYS_OPEN_TREE, [6]uintptr{invalid, empty, invalid}},
		{"mount_setattr", unix.SYS_MOUNT_SETATTR, [6]uintptr{invalid, empty, invalid, 0, 0}},
		{"chroot", unix.SYS_CHROOT, [6]uintptr{0}},
		// Namespaces. A Go program is multi-threaded: the kernel refuses
		// a new user namespace with EINVAL, the filter with EPERM.
		{"unshare(CLONE_NEWUSER)", unix.SYS_UNSHARE, [6]uintptr{cloneNewUser}},
		{"unshare(CLONE_NEWNS)", unix.SYS_UNSHARE, [6]uintptr{cloneNewNS | cloneFS}},
		{"setns", unix.SYS_SETNS, [6]uintptr{invalid, 0}},
		// CLONE_FS with a new mount or user namespace is EINVAL in the
		// kernel, so no child is ever made.
		{"clone(CLONE_NEWNS)", unix.SYS_CLONE, [6]uintptr{cloneNewNS | cloneFS, 0, 0, 0, 0}},
		{"clone(CLONE_NEWUSER)", unix.SYS_CLONE, [6]uintptr{cloneNewUser | cloneFS, 0, 0, 0, 0}},
		{"clone3", unix.SYS_CLONE3, [6]uintptr{0, 0}},
		// Keyrings.
		{"keyctl", unix.SYS_KEYCTL, [6]uintptr{0xffff, 0, 0, 0, 0}},
		{"add_key", unix.SYS_ADD_KEY, [6]uintptr{0, 0, 0, 0, 0}},
		{"request_key", unix.SYS_REQUEST_KEY, [6]uintptr{0, 0, 0, 0}},
		// File handles (CVE-2014-3519).
		{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT, [6]uintptr{invalid, 0, 0}},
		{"name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT, [6]uintptr{invalid, 0, 0, 0, 0}},
		// personality: only the usual ones.
		{"personality(ADDR_NO_RANDOMIZE)", unix.SYS_PERSONALITY, [6]uintptr{0x0040000}},
		{"personality(query)", unix.SYS_PERSONALITY, [6]uintptr{0xffffffff}},
		{"personality(PER_LINUX)", unix.SYS_PERSONALITY, [6]uintptr{0}},
		// Sockets: AF_VSOCK reaches the hypervisor; AF_INET is ordinary.
		{"socket(AF_VSOCK)", unix.SYS_SOCKET, [6]uintptr{unix.AF_VSOCK, unix.SOCK_STREAM, 0}},
		{"socket(AF_INET)", unix.SYS_SOCKET, [6]uintptr{unix.AF_INET, unix.SOCK_STREAM, 0}},
		// Narrowing oneself is allowed.
		{"landlock_create_ruleset(version)", unix.SYS_LANDLOCK_CREATE_RULESET, [6]uintptr{0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION}},
		{"seccomp(GET_ACTION_AVAIL)", unix.SYS_SECCOMP, [6]uintptr{unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&allowAction))}},
		// Ordinary calls.
		{"getpid", unix.SYS_GETPID, [6]uintptr{}},
		{"memfd_create", unix.SYS_MEMFD_CREATE, [6]uintptr{empty, unix.MFD_CLOEXEC}},
		{"pipe2", unix.SYS_PIPE2, [6]uintptr{uintptr(unsafe.Pointer(&pipeFDs[0])), unix.O_CLOEXEC}},
	}
}

var (
	allowAction = uint32(unix.SECCOMP_RET_ALLOW)
	pipeFDs     [2]int32
)

func result(errno unix.Errno) string {
	if errno == 0 {
		return "OK"
	}
	return unix.ErrnoName(errno)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: sysprobe syscalls | handle-read <dir> <type> <hex>")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "syscalls":
		for _, c := range calls() {
			_, _, errno := unix.Syscall6(c.nr, c.args[0], c.args[1], c.args[2], c.args[3], c.args[4], c.args[5])
			fmt.Printf("%s %s\n", c.name, result(errno))
		}
	case "handle-read":
		if len(os.Args) != 5 {
			os.Exit(2)
		}
		fmt.Printf("handle-read %s\n", handleRead(os.Args[2], os.Args[3], os.Args[4]))
	case "notify":
		if len(os.Args) != 3 {
			os.Exit(2)
		}
		fmt.Printf("notify %s\n", notify(os.Getenv("NOTIFY_SOCKET"), os.Args[2]))
	default:
		os.Exit(2)
	}
}

// notify sends msg as one datagram to the socket at addr, as sd_notify(3)
// does: OK, or the errno of the step that failed.
func notify(addr, msg string) string {
	if addr == "" {
		return "unset"
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "socket:" + result(err.(unix.Errno))
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, []byte(msg), 0, &unix.SockaddrUnix{Name: addr}); err != nil {
		return result(err.(unix.Errno))
	}
	return "OK"
}

// handleRead opens the file with the given handle on dir's filesystem and
// reads it: OK:<content>, or the errno of the step that failed.
func handleRead(dir, typ, hexHandle string) string {
	t, err := strconv.Atoi(typ)
	if err != nil {
		return "bad type"
	}
	b, err := hex.DecodeString(hexHandle)
	if err != nil {
		return "bad handle"
	}
	// Any directory on the filesystem will do; the tests pass one the
	// process may read, so only the handle's own open is judged.
	mfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "open-dir:" + result(err.(unix.Errno))
	}
	fd, err := unix.OpenByHandleAt(mfd, unix.NewFileHandle(int32(t), b), unix.O_RDONLY)
	if err != nil {
		return result(err.(unix.Errno))
	}
	buf := make([]byte, 256)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return "read:" + result(err.(unix.Errno))
	}
	return "OK:" + string(buf[:n])
}
