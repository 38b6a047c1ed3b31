package main

import (
	"github.com/vetto-dev/vetto-runtime/darwin"
	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

func initIfRequested() {}

func newBackend() runtime.Backend { return darwin.Backend{} }

// namespaceFacts is nil: darwin has no namespaces to check.
func namespaceFacts() hooks.NamespaceFacts { return nil }
