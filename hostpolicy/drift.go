package hostpolicy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// IsPolicyBundle reports whether s was compiled from a policy: it carries
// the annotations create checks against the host again.
func IsPolicyBundle(s *specs.Spec) bool {
	_, scan := s.Annotations[spec.AnnotationScan]
	_, deny := s.Annotations[spec.AnnotationDeny]
	return scan || deny
}

// Drift checks a policy bundle against the host as it is now — the
// workload of an earlier run may have moved a secret into .git, moved a
// denied directory's parent, planted a socket or a new repository, or
// changed a file served stripped. It scans the roots the compiler scanned
// again, and lists each secret or socket the sandbox would see unmasked,
// each denied path that now exists and shows unmasked, each piece of
// repository metadata or tool configuration it could write, and each
// stripped file that changed. An empty list: the bundle still holds.
func Drift(s *specs.Spec) ([]string, error) {
	var roots, deny []string
	var stripped []spec.Stripped
	for key, dst := range map[string]any{spec.AnnotationScan: &roots, spec.AnnotationDeny: &deny, spec.AnnotationStripped: &stripped} {
		if a, ok := s.Annotations[key]; ok {
			if err := json.Unmarshal([]byte(a), dst); err != nil {
				return nil, fmt.Errorf("annotation %s: %w", key, err)
			}
		}
	}
	m := newMountView(s)
	if err := m.scanRootsShown(roots); err != nil {
		return nil, err
	}
	found, err := Scan(roots)
	if err != nil {
		return nil, err
	}
	// The user's own git config is the compiling user's, not create's:
	// the repositories' configs are what is checked again here.
	found = append(found, HooksDirs(found, GitConfigs(found), "")...)
	var out []string
	masked := func(p, what string) {
		for _, v := range m.views(p) {
			if !m.masked(v) {
				out = append(out, fmt.Sprintf("%s (%s) shows unmasked at %s", p, what, v))
			}
		}
	}
	for _, f := range found {
		switch f.Kind {
		case spec.FoundSecret, spec.FoundSocket:
			masked(f.Path, f.Kind.String())
		case spec.FoundRepo:
			for _, v := range m.views(f.Path) {
				if m.writable(v) && !m.boundAt(v) {
					out = append(out, fmt.Sprintf("repository %s is not pinned at %s: the sandbox could rename it away and put its own in its place", f.Path, v))
				}
			}
			for _, meta := range f.Meta {
				m.readOnly(filepath.Join(f.Path, meta), "repository metadata", &out)
			}
			// What it lacks, the sandbox must not be able to make.
			for _, meta := range missingMeta(f, GitConfigs([]spec.Found{f})) {
				m.notMakeable(filepath.Join(f.Path, meta), &out)
			}
		case spec.FoundGitFile, spec.FoundToolConfig:
			m.readOnly(f.Path, f.Kind.String(), &out)
		case spec.FoundHooksDir:
			if _, err := os.Lstat(f.Path); err == nil {
				m.readOnly(f.Path, f.Kind.String(), &out)
			} else {
				m.notMakeable(f.Path, &out)
			}
		}
	}
	for _, d := range deny {
		if _, err := os.Lstat(d); err == nil {
			masked(d, "denied")
		}
	}
	// The compiler binds real paths: a bind source under a scanned root
	// that leads through a symlink now was made one since — by a sandbox,
	// to have this bind show what it points to inside.
	for _, mnt := range s.Mounts {
		if !isBind(mnt) || !filepath.IsAbs(mnt.Source) || !slices.ContainsFunc(roots, func(r string) bool { return Within(mnt.Source, r) }) {
			continue
		}
		if real := realPath(mnt.Source); real != filepath.Clean(mnt.Source) {
			out = append(out, fmt.Sprintf("%s, which the bundle binds at %s, is now a symlink (to %s): a sandbox may have made it one; look at it", mnt.Source, mnt.Destination, real))
		}
	}
	for _, f := range found {
		if f.Kind == spec.FoundRepo && filepath.Base(f.Path) == ".git" {
			if _, err := os.Lstat(filepath.Join(f.Path, "commondir")); err == nil {
				out = append(out, fmt.Sprintf("%s/commondir sends git to another directory's config (no main repository has one; a sandbox may have planted it): remove it", f.Path))
			}
		}
	}
	for _, st := range stripped {
		data, err := readRegular(st.Path, maxGitConfig)
		sum := sha256.Sum256(data)
		if err != nil || hex.EncodeToString(sum[:]) != st.SHA256 {
			out = append(out, fmt.Sprintf("%s changed since the bundle was compiled (it is served stripped of credentials)", st.Path))
		}
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// mountView is a spec's mounts as the sandbox sees them: which bind shows
// a path, and what covers it later.
type mountView struct {
	mounts      []specs.Mount
	real        []string // each bind's source with symlinks resolved
	maskedPaths []string
}

func newMountView(s *specs.Spec) *mountView {
	m := &mountView{mounts: s.Mounts}
	for _, mnt := range s.Mounts {
		m.real = append(m.real, realPath(mnt.Source))
	}
	if s.Linux != nil {
		m.maskedPaths = s.Linux.MaskedPaths
	}
	return m
}

func isBind(m specs.Mount) bool {
	return m.Type == "bind" || slices.Contains(m.Options, "bind") || slices.Contains(m.Options, "rbind")
}

func isMask(m specs.Mount) bool {
	ro := slices.Contains(m.Options, "ro")
	return ro && ((isBind(m) && m.Source == "/dev/null") || m.Type == "tmpfs")
}

// effective is the index of the mount that shows container path v: the
// last one, in the order they are made, whose destination contains it —
// a mount at a parent made after one below it hides it.
func (m *mountView) effective(v string) int {
	best := -1
	for i, mnt := range m.mounts {
		if Within(v, path.Clean(mnt.Destination)) {
			best = i
		}
	}
	return best
}

// views are the container paths where host path p shows through a bind.
func (m *mountView) views(p string) []string {
	var out []string
	for i, mnt := range m.mounts {
		if !isBind(mnt) || isMask(mnt) || !Within(p, m.real[i]) {
			continue
		}
		v := path.Join(mnt.Destination, p[len(m.real[i]):])
		if m.effective(v) == i && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// masked reports whether container path v is covered by a mask: a mask
// mount at v or a directory mask above it, or a maskedPaths entry.
func (m *mountView) masked(v string) bool {
	for _, p := range m.maskedPaths {
		if Within(v, path.Clean(p)) {
			return true
		}
	}
	i := m.effective(v)
	return i >= 0 && isMask(m.mounts[i])
}

func (m *mountView) writable(v string) bool {
	i := m.effective(v)
	return i >= 0 && isBind(m.mounts[i]) && !slices.Contains(m.mounts[i].Options, "ro")
}

// writableAnywhere reports whether host path p shows writable at any of
// its views.
func (m *mountView) writableAnywhere(p string) bool {
	for _, v := range m.views(p) {
		if m.writable(v) {
			return true
		}
	}
	return false
}

// scanRootsShown refuses scan roots (spec.AnnotationScan) that no bind
// of the bundle shows: the compiler scans the host paths the sandbox
// sees, and a root named by a bundle from elsewhere would have create
// walk, and teardown move repositories in, any directory of the host.
func (m *mountView) scanRootsShown(roots []string) error {
	for _, r := range roots {
		if len(m.views(realPath(r))) == 0 {
			return fmt.Errorf("annotation %s names %s, which no bind of the bundle shows", spec.AnnotationScan, r)
		}
	}
	return nil
}

// boundAt reports whether a bind's destination is exactly v.
func (m *mountView) boundAt(v string) bool {
	i := m.effective(v)
	return i >= 0 && path.Clean(m.mounts[i].Destination) == v
}

// notMakeable adds to out each view of host path p, which does not exist
// and which git runs code from, where the sandbox could make it, and each
// read-only bind of it that would now fail.
func (m *mountView) notMakeable(p string, out *[]string) {
	for _, v := range m.views(p) {
		switch {
		case m.writable(v):
			*out = append(*out, fmt.Sprintf("%s does not exist, and the sandbox could make it at %s: git on the host runs code from it; compile the bundle again", p, v))
		case m.boundAt(v):
			*out = append(*out, fmt.Sprintf("%s, which the bundle shows read-only, no longer exists: compile the bundle again", p))
		}
	}
}

// readOnly adds to out each view of host path p the sandbox could write.
// A writable bind made at exactly that path is the policy's opt-in by name
// (allow_write of it) and is left alone.
func (m *mountView) readOnly(p, what string, out *[]string) {
	for _, v := range m.views(p) {
		if m.writable(v) && !m.boundAt(v) {
			*out = append(*out, fmt.Sprintf("%s (%s) is writable at %s: it runs code on the host", p, what, v))
		}
	}
}
