package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

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
	// Audit is where the evidence that outlives a container goes.
	Audit struct {
		// Dir holds the host-wide audit.jsonl and the frozen spec hashes
		// (default DefaultEvidenceDir, or the user's state dir).
		Dir string `toml:"dir"`
		// Fsync of verdicts, launches, refusals and receipts (default
		// true). Off trades the evidence of the last moments before a
		// power loss for speed.
		Fsync *bool `toml:"fsync"`
	} `toml:"audit"`
	// Monitor is the per-container monitor's settings.
	Monitor struct {
		// Interval between the monitor's rounds once a container has
		// settled (it looks sooner at first, and on cgroup and mount
		// events); default DefaultMonitorInterval.
		Interval Duration `toml:"interval"`
	} `toml:"monitor"`
	// Relay are the egress relay's settings (relay_config.go).
	Relay RelayConfig `toml:"relay"`
}

// Duration is a TOML string such as "5s" or "250ms".
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// Evidence is [audit] applied to the default.
func (c *Config) Evidence() Evidence {
	e := DefaultEvidence()
	if c == nil {
		return e
	}
	if c.Audit.Dir != "" {
		e.Dir = c.Audit.Dir
	}
	if c.Audit.Fsync != nil {
		e.Fsync = *c.Audit.Fsync
	}
	return e
}

// MonitorInterval is [monitor] interval, or the default.
func (c *Config) MonitorInterval() time.Duration {
	if c == nil || c.Monitor.Interval.Duration == 0 {
		return DefaultMonitorInterval
	}
	return c.Monitor.Interval.Duration
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
	data, err := ReadInput(path, maxConfigFile)
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
	if d := c.Audit.Dir; d != "" && !filepath.IsAbs(d) {
		return nil, Errorf(ErrInvalidInput, "operator config %s: [audit] dir %q: want an absolute path", path, d)
	}
	if iv := c.Monitor.Interval.Duration; iv != 0 && (iv < MinMonitorInterval || iv > MaxMonitorInterval) {
		return nil, Errorf(ErrInvalidInput, "operator config %s: [monitor] interval %s: want %s to %s", path, iv, MinMonitorInterval, MaxMonitorInterval)
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
