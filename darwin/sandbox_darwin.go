//go:build darwin

package darwin

import (
	"fmt"
	goruntime "runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sandbox_check is libsystem_sandbox's (re-exported by libSystem), a
// private but long-stable SPI: Chromium, WebKit and LLVM's sanitizers
// declare it themselves, as we do:
//
//	int sandbox_check(pid_t pid, const char *operation, enum sandbox_filter_type type, ...);
//
// It answers from the profile the kernel enforces on pid: 0 allowed, 1
// denied (with a NULL operation and SANDBOX_FILTER_NONE: 1 sandboxed, 0
// not), -1 with errno on error.
//
// It is called without cgo, the way golang.org/x/sys/unix calls libSystem
// on darwin: a dynamic import, an assembly trampoline that jumps to it
// (sandbox_darwin.s), and the runtime's libc call through syscall.syscall6.
// The path is a variadic argument, which arm64 darwin passes on the stack:
// the runtime's libc call places a 6-argument call's fourth argument in
// the first stack slot (for openat, which has the same shape), which is
// where sandbox_check's variadic path goes. This was never run on a Mac.

//go:cgo_import_dynamic libc_sandbox_check sandbox_check "/usr/lib/libSystem.B.dylib"

var libc_sandbox_check_trampoline_addr uintptr

//go:linkname syscall_syscall6 syscall.syscall6
func syscall_syscall6(fn, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err syscall.Errno)

// sandbox_filter_type values (sandbox.h of the SPI).
const (
	sandboxFilterNone = 0
	sandboxFilterPath = 1
)

func sandboxCall(pid int, op string, filter uintptr, arg *byte) (int32, error) {
	var opp *byte
	if op != "" {
		var err error
		if opp, err = unix.BytePtrFromString(op); err != nil {
			return -1, err
		}
	}
	r, _, errno := syscall_syscall6(libc_sandbox_check_trampoline_addr, uintptr(pid), uintptr(unsafe.Pointer(opp)), filter, uintptr(unsafe.Pointer(arg)), 0, 0)
	goruntime.KeepAlive(opp)
	goruntime.KeepAlive(arg)
	ret := int32(r)
	if ret < 0 {
		if errno != 0 {
			return ret, fmt.Errorf("sandbox_check(%d): %w", pid, errno)
		}
		return ret, fmt.Errorf("sandbox_check(%d) returned %d", pid, ret)
	}
	return ret, nil
}

// sandboxed asks the kernel whether pid runs under a sandbox.
func sandboxed(pid int) (bool, error) {
	r, err := sandboxCall(pid, "", sandboxFilterNone, nil)
	if err != nil {
		return false, err
	}
	return r != 0, nil
}

// sandboxAllows asks whether pid's sandbox allows op on path p (p ""
// asks about op with no filter argument).
func sandboxAllows(pid int, op, p string) (bool, error) {
	var r int32
	var err error
	if p == "" {
		r, err = sandboxCall(pid, op, sandboxFilterNone, nil)
	} else {
		pp, perr := unix.BytePtrFromString(p)
		if perr != nil {
			return false, perr
		}
		r, err = sandboxCall(pid, op, sandboxFilterPath, pp)
	}
	if err != nil {
		return false, err
	}
	return r == 0, nil
}
