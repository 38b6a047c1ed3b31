package main

import (
	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/windows"
)

func initIfRequested() {}

// shimIfRequested: the Landlock exec shim is Linux's.
func shimIfRequested() (int, bool) { return 0, false }

func newBackend() runtime.Backend { return windows.Backend() }

// hostFacts is nil: windows has no namespaces or cgroups to check.
func hostFacts() hooks.Facts { return nil }
