package launch

import (
	"fmt"
	"path"
	"strings"
)

// Floor is the operator's lower bound on every launch (the [forbid],
// [require] and [allow] tables and min_level of runtime.toml): a minimum
// level and requests that are forbidden outright, whatever the bundle or
// the caller says. Breaking it is exit 126, with each rule named. The
// runtime decodes the file (and its other sections); Validate checks it.
//
//	min_level = "standard"
//	[forbid]
//	privileged = true            # capabilities outside the minimal set
//	host_namespaces = true       # pid/mount/network/ipc/uts shared or joined
//	no_seccomp = true
//	writable_rootfs = true
//	capabilities = ["CAP_SYS_ADMIN"]
//	hooks = true                 # bundle hooks (allow.hooks excepted)
//	devices = true               # host device nodes and device cgroup grants
//	extra_kernel_mounts = true   # a second proc, sysfs, cgroup, devpts mount
//	unconfined_apparmor = true
//	host_sysctls = true          # sysctls the container's namespaces do not own
//	no_verify = true             # --no-verify
//	degradations = ["verify"]    # features that may never be degraded; "all"
//	weakened = true              # a spec that gives anything of the host away
//	credentials = true           # credentials a bundle names (allow.credentials excepted)
//	[require]
//	default_masks = true         # runc's default masked and read-only paths
//	[allow]
//	bind_sources = ["/srv/ci"]   # every bind's source must be under one of these
//	hooks = ["/usr/libexec/oci/hooks.d/x"]
//	credentials = ["api.example.test file /etc/vetto/credentials/api"] # host, then source
type Floor struct {
	// Path is the file the floor came from, for messages.
	Path     string `toml:"-"`
	MinLevel string `toml:"min_level"`
	Forbid   struct {
		Privileged         bool     `toml:"privileged"`
		HostNamespaces     bool     `toml:"host_namespaces"`
		NoSeccomp          bool     `toml:"no_seccomp"`
		WritableRootfs     bool     `toml:"writable_rootfs"`
		Capabilities       []string `toml:"capabilities"`
		Hooks              bool     `toml:"hooks"`
		Devices            bool     `toml:"devices"`
		ExtraKernelMounts  bool     `toml:"extra_kernel_mounts"`
		UnconfinedAppArmor bool     `toml:"unconfined_apparmor"`
		HostSysctls        bool     `toml:"host_sysctls"`
		NoVerify           bool     `toml:"no_verify"`
		Degradations       []string `toml:"degradations"`
		Weakened           bool     `toml:"weakened"`
		Credentials        bool     `toml:"credentials"`
	} `toml:"forbid"`
	Require struct {
		DefaultMasks bool `toml:"default_masks"`
	} `toml:"require"`
	Allow struct {
		BindSources []string `toml:"bind_sources"`
		Hooks       []string `toml:"hooks"`
		// Credentials are "HOST SOURCE" pairs: the relay may send the
		// value at SOURCE ("file /path" or "env NAME") to HOST.
		Credentials []string `toml:"credentials"`
	} `toml:"allow"`

	minLevel    Level
	minLevelSet bool
	noDegrade   map[Feature]bool
}

// Validate checks the floor's values and prepares it for use; every
// problem is named with its key.
func (f *Floor) Validate() error {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	f.minLevel, f.minLevelSet = Degraded, false
	if f.MinLevel != "" {
		l, err := ParseLevel(f.MinLevel)
		if err != nil {
			bad("min_level: %v", err)
		} else {
			f.minLevel, f.minLevelSet = l, true
		}
	}
	for _, c := range f.Forbid.Capabilities {
		if !strings.HasPrefix(strings.ToUpper(c), "CAP_") {
			bad("forbid.capabilities: %q is not a capability name", c)
		}
	}
	f.noDegrade = map[Feature]bool{}
	for _, d := range f.Forbid.Degradations {
		if d == "all" {
			for feat := range features {
				f.noDegrade[feat] = true
			}
			continue
		}
		if _, ok := features[Feature(d)]; !ok {
			bad("forbid.degradations: unknown feature %q (known: all, %s)", d, strings.Join(FeatureNames(), ", "))
			continue
		}
		f.noDegrade[Feature(d)] = true
	}
	if f.Forbid.NoVerify {
		f.noDegrade[FeatureVerify] = true
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"allow.bind_sources", f.Allow.BindSources}, {"allow.hooks", f.Allow.Hooks}} {
		for _, p := range list.paths {
			if !path.IsAbs(p) || path.Clean(p) != p {
				bad("%s: %q must be an absolute, clean path", list.key, p)
			}
		}
	}
	for _, c := range f.Allow.Credentials {
		if _, _, err := parseCredentialAllow(c); err != nil {
			bad("allow.credentials: %q: %v", c, err)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("operator floor %s: %s", f.Path, strings.Join(problems, "; "))
	}
	return nil
}

// minimum is the lowest level the floor lets a launch have, and whether
// the operator said so (a floor with no min_level, or no floor at all,
// lets the caller choose any level but a bundle none below standard).
func (f *Floor) minimum() (Level, bool) {
	if f == nil {
		return Degraded, false
	}
	return f.minLevel, f.minLevelSet
}

// forbidsDegradation reports whether the floor forbids degrading feature.
func (f *Floor) forbidsDegradation(feature Feature) bool {
	return f != nil && f.noDegrade[feature]
}

func (f *Floor) name() string {
	if f == nil || f.Path == "" {
		return "the operator floor"
	}
	return "operator floor " + f.Path
}

// parseCredentialAllow reads an allow.credentials entry: "HOST file
// /abs/path" or "HOST env NAME".
func parseCredentialAllow(entry string) (host, source string, err error) {
	parts := strings.Fields(entry)
	if len(parts) != 3 || parts[1] != "file" && parts[1] != "env" {
		return "", "", fmt.Errorf(`want "HOST file /path" or "HOST env NAME"`)
	}
	if parts[1] == "file" && (!path.IsAbs(parts[2]) || path.Clean(parts[2]) != parts[2]) {
		return "", "", fmt.Errorf("the file must be an absolute, clean path")
	}
	return strings.ToLower(parts[0]), parts[1] + " " + parts[2], nil
}

// credentialAllowed reports whether the operator lets the relay send the
// value at source to host.
func (f *Floor) credentialAllowed(host, source string) bool {
	if f == nil {
		return false
	}
	for _, a := range f.Allow.Credentials {
		if h, s, err := parseCredentialAllow(a); err == nil && h == strings.ToLower(host) && s == source {
			return true
		}
	}
	return false
}

// hookAllowed reports whether the operator allows a bundle hook at p.
func (f *Floor) hookAllowed(p string) bool {
	if f == nil {
		return false
	}
	for _, a := range f.Allow.Hooks {
		if path.Clean(p) == a {
			return true
		}
	}
	return false
}
