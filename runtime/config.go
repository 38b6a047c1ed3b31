package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// DefaultConfigPath is the operator's runtime.toml; absent means no floor
// and the default settings.
const DefaultConfigPath = "/etc/vetto/runtime.toml"

// Config is runtime.toml: the operator's floor (min_level and the
// [forbid], [require] and [allow] tables, which the launch evaluator
// applies) and the runtime's own settings. Nothing in it comes from a
// bundle.
type Config struct {
	launch.Floor
	// Policy are the settings of policy-compiled bundles.
	Policy struct {
		// SandboxID is the unprivileged host uid and gid a root caller's
		// sandbox runs as in a root-owned project (0: spec's default).
		SandboxID uint32 `toml:"sandbox_id"`
	} `toml:"policy"`
	// Relay are the egress relay's settings (relay_config.go).
	Relay RelayConfig `toml:"relay"`
}

// SandboxID is [policy] sandbox_id, 0 without a config.
func (c *Config) SandboxID() uint32 {
	if c == nil {
		return 0
	}
	return c.Policy.SandboxID
}

// LoadConfig reads the file at path. A missing file is no floor only when
// the path is the default one; a --config that names a missing file is an
// error, so a typo cannot silently drop the operator's rules.
func LoadConfig(path string, explicit bool) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return nil, nil
		}
		return nil, Errorf(ErrInvalidInput, "operator config %s: %w", path, err)
	}
	return ParseConfig(path, data)
}

// ParseConfig parses a runtime.toml; unknown keys are errors.
func ParseConfig(path string, data []byte) (*Config, error) {
	c := &Config{}
	md, err := toml.Decode(string(data), c)
	if err != nil {
		return nil, Errorf(ErrInvalidInput, "operator config %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, Errorf(ErrInvalidInput, "operator config %s: unknown keys: %s", path, strings.Join(keys, ", "))
	}
	c.Floor.Path = path
	if err := errors.Join(c.Floor.Validate(), c.Relay.validate(path)); err != nil {
		return nil, WithKind(ErrInvalidInput, err)
	}
	return c, nil
}

// floor is the config's floor, nil without a config.
func (c *Config) floor() *launch.Floor {
	if c == nil {
		return nil
	}
	return &c.Floor
}

// String names the config for messages.
func (c *Config) String() string {
	if c == nil {
		return "no operator config"
	}
	return fmt.Sprintf("operator config %s", c.Floor.Path)
}
