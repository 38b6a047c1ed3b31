//go:build unix

package cli

import "syscall"

// monitorProcAttr puts the monitor in a session of its own: no terminal,
// no signal from the caller's.
func monitorProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
