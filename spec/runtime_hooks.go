package spec

import (
	"path"
	"strconv"

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

// BundleHook is one of the bundle's own hooks (not vetto-runtime's).
type BundleHook struct {
	// Phase is the hook's list ("prestart", "createRuntime", …), Index its
	// place in that list: the field is hooks.<Phase>[<Index>].
	Phase string
	Index int
	Hook  specs.Hook
}

// Field is the hook's JSON path in config.json.
func (b BundleHook) Field() string { return "hooks." + b.Phase + "[" + strconv.Itoa(b.Index) + "]" }

// BundleHooks lists every hook of h in the spec's order of phases, less
// vetto-runtime's own poststart and poststop entries: the hooks that would
// run the bundle's programs on the host. h may be nil.
func BundleHooks(h *specs.Hooks) []BundleHook {
	if h == nil {
		return nil
	}
	var out []BundleHook
	for _, ph := range []struct {
		name, own string
		list      []specs.Hook
	}{
		//lint:ignore SA1019 prestart is deprecated in the spec but still honoured
		{"prestart", "", h.Prestart},
		{"createRuntime", "", h.CreateRuntime},
		{"createContainer", "", h.CreateContainer},
		{"startContainer", "", h.StartContainer},
		{"poststart", RuntimeHookPoststart, h.Poststart},
		{"poststop", RuntimeHookPoststop, h.Poststop},
	} {
		for i, hk := range ph.list {
			if ph.own != "" && IsRuntimeHook(hk, ph.own) {
				continue
			}
			out = append(out, BundleHook{Phase: ph.name, Index: i, Hook: hk})
		}
	}
	return out
}
