// Package landlock reads the dev.vetto.landlock annotation, knows which
// Landlock ABI supports which access right, and restricts the calling
// thread with a ruleset. It imports nothing of vetto-runtime: the runtime's
// plan, the pre-launch checks, the exec shim and the in-container probe all
// judge and apply the same ruleset with it.
package landlock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Ruleset is the dev.vetto.landlock annotation. Its shape follows the
// process.landlock object proposed for the OCI runtime spec (PRs
// #1111/#1241): the handled rights and the rules carry the kernel's
// numeric access rights (linux/landlock.h), so a right a newer kernel adds
// needs no new field. Paths are container paths (after pivot_root).
type Ruleset struct {
	Ruleset Handled `json:"ruleset"`
	Rules   Rules   `json:"rules"`
}

// Handled is what the ruleset restricts: every handled right is denied
// except where a rule grants it.
type Handled struct {
	AccessFS  uint64 `json:"handledAccessFS"`
	AccessNet uint64 `json:"handledAccessNet,omitempty"`
	// Scoped is LANDLOCK_SCOPE_* (abstract unix sockets, signals).
	Scoped uint64 `json:"scoped,omitempty"`
}

// Rules grant handled rights back.
type Rules struct {
	PathBeneath []PathBeneath `json:"pathBeneath,omitempty"`
	NetPort     []NetPort     `json:"netPort,omitempty"`
}

// PathBeneath grants AllowedAccess on each path's file hierarchy.
type PathBeneath struct {
	AllowedAccess uint64   `json:"allowedAccess"`
	Paths         []string `json:"paths"`
}

// NetPort grants AllowedAccess (bind/connect TCP) on each port.
type NetPort struct {
	AllowedAccess uint64   `json:"allowedAccess"`
	Ports         []uint64 `json:"ports"`
}

// Parse reads and checks an annotation. Unknown fields are errors: a rule
// kind this build does not know must not be dropped silently, since
// dropping it would only ever widen or narrow the sandbox unnoticed.
func Parse(annotation string) (*Ruleset, error) {
	dec := json.NewDecoder(strings.NewReader(annotation))
	dec.DisallowUnknownFields()
	var rs Ruleset
	if err := dec.Decode(&rs); err != nil {
		return nil, fmt.Errorf("landlock ruleset: %w", err)
	}
	// Not dec.More: it calls a stray '}' or ']' the end of the input.
	if strings.Trim(annotation[dec.InputOffset():], " \t\n\r") != "" {
		return nil, errors.New("landlock ruleset: trailing data after the JSON object")
	}
	if err := rs.validate(); err != nil {
		return nil, fmt.Errorf("landlock ruleset: %w", err)
	}
	return &rs, nil
}

func (rs *Ruleset) validate() error {
	h := rs.Ruleset
	if h.AccessFS == 0 && h.AccessNet == 0 && h.Scoped == 0 {
		return errors.New("handles no access right (ruleset.handledAccessFS, handledAccessNet and scoped are all 0)")
	}
	if unknown := h.AccessFS &^ knownFS; unknown != 0 {
		return fmt.Errorf("ruleset.handledAccessFS: unknown rights %#x", unknown)
	}
	if unknown := h.AccessNet &^ knownNet; unknown != 0 {
		return fmt.Errorf("ruleset.handledAccessNet: unknown rights %#x", unknown)
	}
	if unknown := h.Scoped &^ knownScoped; unknown != 0 {
		return fmt.Errorf("ruleset.scoped: unknown scopes %#x", unknown)
	}
	for i, r := range rs.Rules.PathBeneath {
		if r.AllowedAccess == 0 || r.AllowedAccess&^h.AccessFS != 0 {
			return fmt.Errorf("rules.pathBeneath[%d].allowedAccess %#x: must be non-zero and within handledAccessFS %#x", i, r.AllowedAccess, h.AccessFS)
		}
		if len(r.Paths) == 0 {
			return fmt.Errorf("rules.pathBeneath[%d].paths: empty", i)
		}
		for j, p := range r.Paths {
			if !path.IsAbs(p) || path.Clean(p) != p {
				return fmt.Errorf("rules.pathBeneath[%d].paths[%d] %q: must be an absolute, clean container path", i, j, p)
			}
		}
	}
	for i, r := range rs.Rules.NetPort {
		if r.AllowedAccess == 0 || r.AllowedAccess&^h.AccessNet != 0 {
			return fmt.Errorf("rules.netPort[%d].allowedAccess %#x: must be non-zero and within handledAccessNet %#x", i, r.AllowedAccess, h.AccessNet)
		}
		for j, p := range r.Ports {
			if p > 65535 {
				return fmt.Errorf("rules.netPort[%d].ports[%d] %d: not a port", i, j, p)
			}
		}
	}
	return nil
}

// Encode is the annotation form of rs: what the shim is handed.
func (rs *Ruleset) Encode() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// A Ruleset holds only integers, strings and slices of them: encoding
	// cannot fail.
	_ = enc.Encode(rs)
	return strings.TrimSuffix(b.String(), "\n")
}

// Right is one access right with the ABI that introduced it.
type Right struct {
	Kind string // "fs", "net" or "scope"
	Bit  uint64
	Name string
	ABI  int
}

func (r Right) String() string { return fmt.Sprintf("%s %s (ABI %d)", r.Kind, r.Name, r.ABI) }

// Rights is the ABI matrix: every access right and scope this build
// knows, by the Landlock ABI version that first supports it
// (Documentation/userspace-api/landlock.rst).
var Rights = []Right{
	{"fs", 1 << 0, "execute", 1},
	{"fs", 1 << 1, "write_file", 1},
	{"fs", 1 << 2, "read_file", 1},
	{"fs", 1 << 3, "read_dir", 1},
	{"fs", 1 << 4, "remove_dir", 1},
	{"fs", 1 << 5, "remove_file", 1},
	{"fs", 1 << 6, "make_char", 1},
	{"fs", 1 << 7, "make_dir", 1},
	{"fs", 1 << 8, "make_reg", 1},
	{"fs", 1 << 9, "make_sock", 1},
	{"fs", 1 << 10, "make_fifo", 1},
	{"fs", 1 << 11, "make_block", 1},
	{"fs", 1 << 12, "make_sym", 1},
	{"fs", 1 << 13, "refer", 2},
	{"fs", 1 << 14, "truncate", 3},
	{"fs", 1 << 15, "ioctl_dev", 5},
	{"net", 1 << 0, "bind_tcp", 4},
	{"net", 1 << 1, "connect_tcp", 4},
	{"scope", 1 << 0, "abstract_unix_socket", 6},
	{"scope", 1 << 1, "signal", 6},
}

// KnownABI is the newest ABI that adds a right or scope this build knows
// (ABI 7 and later add logging flags; 9 and 10 rights not used yet).
const KnownABI = 6

var knownFS, knownNet, knownScoped = known("fs"), known("net"), known("scope")

func known(kind string) uint64 {
	var m uint64
	for _, r := range Rights {
		if r.Kind == kind {
			m |= r.Bit
		}
	}
	return m
}

// Supported is what ABI version abi can handle, as a Handled mask.
func Supported(abi int) Handled {
	var h Handled
	for _, r := range Rights {
		if r.ABI > abi {
			continue
		}
		switch r.Kind {
		case "fs":
			h.AccessFS |= r.Bit
		case "net":
			h.AccessNet |= r.Bit
		case "scope":
			h.Scoped |= r.Bit
		}
	}
	return h
}

// Unsupported lists, in matrix order, each right rs handles that ABI
// version abi cannot enforce. An empty list means the host enforces rs
// exactly.
func (rs *Ruleset) Unsupported(abi int) []Right {
	s := Supported(abi)
	var out []Right
	for _, r := range Rights {
		var handled, supported uint64
		switch r.Kind {
		case "fs":
			handled, supported = rs.Ruleset.AccessFS, s.AccessFS
		case "net":
			handled, supported = rs.Ruleset.AccessNet, s.AccessNet
		case "scope":
			handled, supported = rs.Ruleset.Scoped, s.Scoped
		}
		if handled&r.Bit != 0 && supported&r.Bit == 0 {
			out = append(out, r)
		}
	}
	return out
}

// Describe names rights for an error message: "fs refer (ABI 2), …".
func Describe(rights []Right) string {
	names := make([]string, len(rights))
	for i, r := range rights {
		names[i] = r.String()
	}
	return strings.Join(names, ", ")
}

// Downgrade is rs reduced to what ABI version abi enforces: unsupported
// rights are neither handled nor granted. It is for the degraded level
// only, where what is dropped has been named and recorded. It returns nil
// when nothing is left to enforce (no Landlock at all).
func (rs *Ruleset) Downgrade(abi int) *Ruleset {
	s := Supported(abi)
	out := &Ruleset{Ruleset: Handled{
		AccessFS:  rs.Ruleset.AccessFS & s.AccessFS,
		AccessNet: rs.Ruleset.AccessNet & s.AccessNet,
		Scoped:    rs.Ruleset.Scoped & s.Scoped,
	}}
	if out.Ruleset == (Handled{}) {
		return nil
	}
	for _, r := range rs.Rules.PathBeneath {
		if a := r.AllowedAccess & out.Ruleset.AccessFS; a != 0 {
			out.Rules.PathBeneath = append(out.Rules.PathBeneath, PathBeneath{AllowedAccess: a, Paths: slices.Clone(r.Paths)})
		}
	}
	for _, r := range rs.Rules.NetPort {
		if a := r.AllowedAccess & out.Ruleset.AccessNet; a != 0 {
			out.Rules.NetPort = append(out.Rules.NetPort, NetPort{AllowedAccess: a, Ports: slices.Clone(r.Ports)})
		}
	}
	return out
}
