package spec

import (
	"path"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// vetto's own OCI hooks: `<runtime> hook poststart` verifies the running
// container and `<runtime> hook poststop` checks its teardown. They are in
// the spec so that a runtime other than vetto-runtime running a vetto
// bundle runs them too; vetto-runtime recognises them and does the same
// work in-process instead of executing itself.
const (
	RuntimeHookArg0      = "vetto-runtime"
	RuntimeHookCommand   = "hook"
	RuntimeHookPoststart = "poststart"
	RuntimeHookPoststop  = "poststop"
)

// RuntimeHook is vetto's own hook entry for phase, running the binary at
// runtimePath.
func RuntimeHook(runtimePath, phase string) specs.Hook {
	return specs.Hook{Path: runtimePath, Args: []string{RuntimeHookArg0, RuntimeHookCommand, phase}}
}

// IsRuntimeHook reports whether h is vetto's own entry for phase, wherever
// its binary lives.
func IsRuntimeHook(h specs.Hook, phase string) bool {
	return len(h.Args) == 3 && path.Base(h.Args[0]) == RuntimeHookArg0 &&
		h.Args[1] == RuntimeHookCommand && h.Args[2] == phase
}

// WithRuntimeHooks returns a copy of hooks with vetto's poststart and
// poststop entries first in their lists (the verification must run before
// any hook of the bundle's), added unless the list already has one. hooks
// may be nil.
func WithRuntimeHooks(hooks *specs.Hooks, runtimePath string) *specs.Hooks {
	var out specs.Hooks
	if hooks != nil {
		out = *hooks
	}
	ensure := func(list []specs.Hook, phase string) []specs.Hook {
		for _, h := range list {
			if IsRuntimeHook(h, phase) {
				return list
			}
		}
		return append([]specs.Hook{RuntimeHook(runtimePath, phase)}, list...)
	}
	out.Poststart = ensure(out.Poststart, RuntimeHookPoststart)
	out.Poststop = ensure(out.Poststop, RuntimeHookPoststop)
	return &out
}

// WithoutRuntimeHooks returns list without vetto's own entries for phase:
// what is left are the bundle's hooks, which vetto-runtime executes.
func WithoutRuntimeHooks(list []specs.Hook, phase string) []specs.Hook {
	var out []specs.Hook
	for _, h := range list {
		if !IsRuntimeHook(h, phase) {
			out = append(out, h)
		}
	}
	return out
}
