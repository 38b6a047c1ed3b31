package cli

import "syscall"

func monitorProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
