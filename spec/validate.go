package spec

import (
	"fmt"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// namespaceTypes are the Linux namespace types the runtime spec defines.
var namespaceTypes = map[specs.LinuxNamespaceType]bool{
	specs.PIDNamespace: true, specs.NetworkNamespace: true, specs.MountNamespace: true,
	specs.IPCNamespace: true, specs.UTSNamespace: true, specs.UserNamespace: true,
	specs.CgroupNamespace: true, specs.TimeNamespace: true,
}

// Validate checks the parts of a spec that vetto-runtime relies on before it
// creates anything. It returns nil or a Violations listing every problem.
// The checks follow the MUSTs of the runtime spec's config.md; deeper checks
// (devices, seccomp rules, cgroup values) are left to the backend, which
// rejects them before any process exists.
func Validate(s *specs.Spec) error {
	var vs Violations
	add := func(field, format string, args ...any) {
		vs = append(vs, Violation{Field: field, Reason: fmt.Sprintf(format, args...)})
	}

	if s.Version == "" {
		add("ociVersion", "must be set")
	} else if !strings.HasPrefix(s.Version, "1.") {
		add("ociVersion", "%q is not a 1.x runtime-spec version", s.Version)
	}
	if s.Root == nil || s.Root.Path == "" {
		add("root.path", "must be set")
	}
	validateProcess(s.Process, add)
	for i, m := range s.Mounts {
		if m.Destination == "" {
			add(fmt.Sprintf("mounts[%d].destination", i), "must be set")
		} else if !filepath.IsAbs(m.Destination) {
			// runc accepts relative destinations with a warning; the spec
			// says "This value MUST be an absolute path", so we refuse.
			add(fmt.Sprintf("mounts[%d].destination", i), "%q must be an absolute path", m.Destination)
		}
	}
	validateHooks(s.Hooks, add)
	if s.Linux != nil {
		seen := map[specs.LinuxNamespaceType]bool{}
		for i, ns := range s.Linux.Namespaces {
			field := fmt.Sprintf("linux.namespaces[%d]", i)
			if !namespaceTypes[ns.Type] {
				add(field+".type", "unknown namespace type %q", ns.Type)
				continue
			}
			if seen[ns.Type] {
				add(field+".type", "namespace %q listed twice", ns.Type)
			}
			seen[ns.Type] = true
			if ns.Path != "" && !filepath.IsAbs(ns.Path) {
				add(field+".path", "%q must be an absolute path", ns.Path)
			}
		}
		for i, p := range s.Linux.MaskedPaths {
			if !filepath.IsAbs(p) {
				add(fmt.Sprintf("linux.maskedPaths[%d]", i), "%q must be an absolute path", p)
			}
		}
		for i, p := range s.Linux.ReadonlyPaths {
			if !filepath.IsAbs(p) {
				add(fmt.Sprintf("linux.readonlyPaths[%d]", i), "%q must be an absolute path", p)
			}
		}
	}
	if len(vs) == 0 {
		return nil
	}
	return vs
}

func validateProcess(p *specs.Process, add func(string, string, ...any)) {
	if p == nil {
		// config.md 1.3: "REQUIRED when start is called"; create builds
		// the container without one (runtime.Run and Start refuse it).
		return
	}
	if len(p.Args) == 0 && p.CommandLine == "" {
		add("process.args", "must not be empty")
	}
	if p.Cwd == "" {
		add("process.cwd", "must be set")
	} else if !filepath.IsAbs(p.Cwd) {
		add("process.cwd", "%q must be an absolute path", p.Cwd)
	}
	for i, e := range p.Env {
		if !strings.Contains(e, "=") {
			add(fmt.Sprintf("process.env[%d]", i), "%q is not of the form KEY=value", e)
		}
	}
	if p.ConsoleSize != nil && !p.Terminal {
		add("process.consoleSize", "set but process.terminal is false")
	}
	if c := p.Capabilities; c != nil {
		// A name no kernel has, or not as libcontainer spells it (its
		// lookup is case-sensitive): it would skip the name with a
		// warning, and the container's capabilities would not be the
		// spec's.
		for _, set := range []struct {
			name  string
			names []string
		}{{"bounding", c.Bounding}, {"effective", c.Effective}, {"inheritable", c.Inheritable}, {"permitted", c.Permitted}, {"ambient", c.Ambient}} {
			for i, n := range set.names {
				if _, ok := CapabilityBits[n]; !ok {
					add(fmt.Sprintf("process.capabilities.%s[%d]", set.name, i), "unknown capability %q (names are the kernel's, as CAP_NET_BIND_SERVICE)", n)
				}
			}
		}
	}
	for i, rl := range p.Rlimits {
		if rl.Soft > rl.Hard {
			add(fmt.Sprintf("process.rlimits[%d]", i), "%s soft limit %d exceeds hard limit %d", rl.Type, rl.Soft, rl.Hard)
		}
	}
}

func validateHooks(h *specs.Hooks, add func(string, string, ...any)) {
	if h == nil {
		return
	}
	phases := []struct {
		name  string
		hooks []specs.Hook
	}{
		//lint:ignore SA1019 prestart is deprecated in the spec but still honoured
		{"prestart", h.Prestart},
		{"createRuntime", h.CreateRuntime},
		{"createContainer", h.CreateContainer},
		{"startContainer", h.StartContainer},
		{"poststart", h.Poststart},
		{"poststop", h.Poststop},
	}
	for _, ph := range phases {
		for i, hk := range ph.hooks {
			field := fmt.Sprintf("hooks.%s[%d]", ph.name, i)
			if hk.Path == "" {
				add(field+".path", "must be set")
			} else if !filepath.IsAbs(hk.Path) {
				add(field+".path", "%q must be an absolute path", hk.Path)
			}
			if hk.Timeout != nil && *hk.Timeout <= 0 {
				add(field+".timeout", "must be greater than zero, got %d", *hk.Timeout)
			}
		}
	}
}
