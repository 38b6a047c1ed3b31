package main

import (
	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/windows"
)

func initIfRequested() {}

func newBackend() runtime.Backend { return windows.Backend() }

// hostFacts is nil: windows has no namespaces or cgroups to check.
func hostFacts() hooks.Facts { return nil }
