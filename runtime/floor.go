package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/BurntSushi/toml"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// DefaultFloorPath is the operator's floor file; absent means no floor.
const DefaultFloorPath = "/etc/vetto/runtime.toml"

// Floor is the operator's lower bound on what any launch may be: a minimum
// level and requests that are forbidden outright. A bundle that breaks it
// is refused with exit 126 and the rule's name. Example:
//
//	min_level = "standard"
//	[forbid]
//	privileged = true        # capabilities outside the minimal set
//	host_namespaces = true   # pid/mount/network/ipc/uts shared or joined
//	no_seccomp = true
//	writable_rootfs = true
//	capabilities = ["CAP_SYS_ADMIN", "CAP_SYS_MODULE"]
type Floor struct {
	Path     string `toml:"-"`
	MinLevel string `toml:"min_level"`
	Forbid   struct {
		Privileged     bool     `toml:"privileged"`
		HostNamespaces bool     `toml:"host_namespaces"`
		NoSeccomp      bool     `toml:"no_seccomp"`
		WritableRootfs bool     `toml:"writable_rootfs"`
		Capabilities   []string `toml:"capabilities"`
	} `toml:"forbid"`
	minLevel Level
}

// LoadFloor reads the floor at path. A missing file is no floor only when
// the path is the default one; a --config that names a missing file is an
// error, so a typo cannot silently drop the operator's rules.
func LoadFloor(path string, explicit bool) (*Floor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return nil, nil
		}
		return nil, fmt.Errorf("operator floor %s: %w", path, err)
	}
	return ParseFloor(path, data)
}

// ParseFloor parses a floor file; unknown keys are errors.
func ParseFloor(path string, data []byte) (*Floor, error) {
	f := &Floor{Path: path}
	md, err := toml.Decode(string(data), f)
	if err != nil {
		return nil, Errorf(ErrInvalidInput, "operator floor %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, Errorf(ErrInvalidInput, "operator floor %s: unknown keys: %s", path, strings.Join(keys, ", "))
	}
	f.minLevel = LevelDegraded
	if f.MinLevel != "" {
		l, err := ParseLevel(f.MinLevel)
		if err != nil {
			return nil, Errorf(ErrInvalidInput, "operator floor %s: min_level: %w", path, err)
		}
		f.minLevel = l
	}
	for _, c := range f.Forbid.Capabilities {
		if !strings.HasPrefix(c, "CAP_") {
			return nil, Errorf(ErrInvalidInput, "operator floor %s: forbid.capabilities: %q is not a capability name", path, c)
		}
	}
	return f, nil
}

// check returns the first rule of the floor that level and s break, as an
// error of kind ErrFloorForbids naming the rule and the file.
func (f *Floor) check(level Level, s *specs.Spec) error {
	if f == nil {
		return nil
	}
	var broken []string
	if level < f.minLevel {
		broken = append(broken, fmt.Sprintf("min_level = %q: the launch is at level %s", f.minLevel, level))
	}
	if f.Forbid.HostNamespaces {
		for _, t := range strictNamespaces {
			if p, ok := namespacePath(s, t); !ok || p != "" {
				broken = append(broken, fmt.Sprintf("forbid.host_namespaces: the %s namespace is not a new one", t))
			}
		}
	}
	if f.Forbid.NoSeccomp && (s.Linux == nil || s.Linux.Seccomp == nil) {
		broken = append(broken, "forbid.no_seccomp: the bundle has no seccomp filter")
	}
	if f.Forbid.WritableRootfs && (s.Root == nil || !s.Root.Readonly) {
		broken = append(broken, "forbid.writable_rootfs: root.readonly is not true")
	}
	if f.Forbid.Privileged {
		if s.Process == nil || s.Process.Capabilities == nil {
			broken = append(broken, "forbid.privileged: process.capabilities unset (the process would keep all of the runtime's)")
		} else if extra := capsOutside(s.Process.Capabilities); len(extra) > 0 {
			broken = append(broken, "forbid.privileged: capabilities outside the minimal set: "+strings.Join(extra, ", "))
		}
	}
	if len(f.Forbid.Capabilities) > 0 && s.Process != nil && s.Process.Capabilities != nil {
		forbidden := map[string]bool{}
		for _, c := range f.Forbid.Capabilities {
			forbidden[strings.ToUpper(c)] = true
		}
		c := s.Process.Capabilities
		for _, set := range [][]string{c.Bounding, c.Effective, c.Permitted, c.Inheritable, c.Ambient} {
			for _, name := range set {
				if forbidden[strings.ToUpper(name)] {
					broken = append(broken, "forbid.capabilities: "+name)
					forbidden[strings.ToUpper(name)] = false
				}
			}
		}
	}
	if len(broken) == 0 {
		return nil
	}
	return Errorf(ErrFloorForbids, "operator floor %s forbids this launch: %s", f.Path, strings.Join(broken, "; "))
}
