//go:build darwin

#include "textflag.h"

// The trampoline golang.org/x/sys/unix uses for every libSystem call: a
// jump to the dynamically imported symbol (see sandbox_darwin.go).
TEXT libc_sandbox_check_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_sandbox_check(SB)

GLOBL	·libc_sandbox_check_trampoline_addr(SB), RODATA, $8
DATA	·libc_sandbox_check_trampoline_addr(SB)/8, $libc_sandbox_check_trampoline<>(SB)
