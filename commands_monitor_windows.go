package main

import "syscall"

func monitorProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
