package main

import (
	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/windows"
)

func initIfRequested() {}

func newBackend() runtime.Backend { return windows.Backend{} }

// namespaceFacts is nil: windows has no namespaces to check.
func namespaceFacts() hooks.NamespaceFacts { return nil }
