// Package spec holds the pure parts of vetto-runtime's view of an OCI bundle:
// parsing and validating config.json, and resolving bundle-relative paths.
// Nothing here touches the host: no syscalls, environment, clock or files.
package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// jsonSpace is JSON's white space (RFC 8259), narrower than Go's: a form
// feed after the object is trailing data, not space.
const jsonSpace = " \t\n\r"

// ConfigFile is the name of the bundle's configuration file.
const ConfigFile = "config.json"

// Parse decodes a bundle's config.json. Unknown fields are accepted: the OCI
// spec lets producers carry extensions a runtime does not know.
func Parse(data []byte) (*specs.Spec, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("config.json is empty")
	}
	if len(data) > MaxConfigSize {
		return nil, fmt.Errorf("config.json is %d bytes, over the %d this runtime reads", len(data), MaxConfigSize)
	}
	if err := CheckKeys(data); err != nil {
		return nil, err
	}
	var s specs.Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("invalid config.json: field %q: cannot use JSON %s as %s", typeErr.Field, typeErr.Value, typeErr.Type)
		}
		return nil, fmt.Errorf("invalid config.json: %w", err)
	}
	// Not dec.More: it calls a stray '}' or ']' the end of the input.
	// Nor Go's white space: it includes a form feed and more.
	if len(bytes.Trim(data[dec.InputOffset():], jsonSpace)) > 0 {
		return nil, errors.New("invalid config.json: trailing data after the JSON object")
	}
	return &s, nil
}

// Resolve returns a copy of s whose bundle-relative paths (root.path and the
// sources of bind mounts) are absolute, anchored at bundle. The OCI spec says
// root.path "MAY be an absolute path or a relative path to the bundle", and a
// bind mount's relative source is relative to the bundle too; resolving them
// here means nothing downstream needs to chdir into the bundle.
func Resolve(s *specs.Spec, bundle string) (*specs.Spec, error) {
	if !filepath.IsAbs(bundle) {
		return nil, fmt.Errorf("bundle path %q is not absolute", bundle)
	}
	out, err := Clone(s)
	if err != nil {
		return nil, err
	}
	return out, ResolveInPlace(out, bundle)
}

// ResolveInPlace is Resolve on s itself, for a caller that owns s (create,
// which parsed it): no copy of a spec that may be mostly a seccomp profile.
func ResolveInPlace(s *specs.Spec, bundle string) error {
	if !filepath.IsAbs(bundle) {
		return fmt.Errorf("bundle path %q is not absolute", bundle)
	}
	if s.Root != nil && s.Root.Path != "" && !filepath.IsAbs(s.Root.Path) {
		s.Root.Path = filepath.Join(bundle, s.Root.Path)
	}
	for i := range s.Mounts {
		m := &s.Mounts[i]
		if m.Source != "" && !filepath.IsAbs(m.Source) && isBind(*m) {
			m.Source = filepath.Join(bundle, m.Source)
		}
	}
	return nil
}

// Clone deep-copies a spec through JSON, the form it is stored in.
func Clone(s *specs.Spec) (*specs.Spec, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("copy spec: %w", err)
	}
	var out specs.Spec
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("copy spec: %w", err)
	}
	return &out, nil
}

func isBind(m specs.Mount) bool {
	if m.Type == "bind" {
		return true
	}
	for _, o := range m.Options {
		if o == "bind" || o == "rbind" {
			return true
		}
	}
	return false
}

// Violation is one way a config.json breaks the OCI runtime spec. Field is a
// JSON path such as "process.args" so the user can find it.
type Violation struct {
	Field  string
	Reason string
}

func (v Violation) String() string { return v.Field + ": " + v.Reason }

// Violations is every violation found; a validator reports all of them, not
// just the first, so one edit can fix a bundle.
type Violations []Violation

func (vs Violations) Error() string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return "invalid config.json: " + strings.Join(parts, "; ")
}

// ErrInvalid is wrapped by every validation failure, so callers can tell bad
// input from a runtime failure without reading the text.
var ErrInvalid = errors.New("invalid bundle configuration")

func (vs Violations) Unwrap() error { return ErrInvalid }
