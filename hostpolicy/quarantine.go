package hostpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// QuarantineSuffix is appended to what Quarantine moves aside.
const QuarantineSuffix = ".vetto-quarantined"

// Planted lists what a sandbox may have left in its readable roots that
// would run code on the host the next time the user's git looks there,
// and that no bind could have kept it from writing: a repository (a .git
// directory or file, or a git directory of any other name: a bare
// repository) that did not exist when the bundle was compiled — a shell
// prompt runs git status in it on cd — and a commondir file in a
// repository's own git directory, which no main repository has and which
// sends git to another directory's config.
func Planted(s *specs.Spec) ([]string, error) {
	var roots, known []string
	for key, dst := range map[string]*[]string{spec.AnnotationScan: &roots, spec.AnnotationRepos: &known} {
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
	var out []string
	for _, f := range found {
		if f.Kind != spec.FoundRepo && f.Kind != spec.FoundGitFile {
			continue
		}
		// Only what the sandbox could have made: a .git in a directory
		// it could write, a commondir in a git directory it could write.
		// The annotations are the bundle's word; this is the mounts'.
		if !slices.Contains(known, f.Path) && filepath.Base(f.Path) == ".git" {
			if m.writableAnywhere(filepath.Dir(f.Path)) {
				out = append(out, f.Path)
			}
			continue
		}
		if !slices.Contains(known, f.Path) && f.Kind == spec.FoundRepo {
			// A bare repository: git finds it by its HEAD, so that is
			// what is moved aside.
			if m.writableAnywhere(f.Path) {
				out = append(out, filepath.Join(f.Path, "HEAD"))
			}
			continue
		}
		if commondir := filepath.Join(f.Path, "commondir"); f.Kind == spec.FoundRepo && filepath.Base(f.Path) == ".git" {
			if _, err := os.Lstat(commondir); err == nil && m.writableAnywhere(f.Path) {
				out = append(out, commondir)
			}
		}
	}
	return out, nil
}

// Quarantine moves what Planted finds aside (name + QuarantineSuffix),
// where no git looks, and returns where each went. A planted .git
// directory also has its HEAD moved aside inside it: git takes a
// directory with a HEAD, objects/ and refs/ for a repository whatever its
// name, and a user who enters the quarantined directory to look at it
// must not run its config. It runs at teardown, when nothing can write
// there any more.
func Quarantine(s *specs.Spec) ([]string, error) {
	planted, err := Planted(s)
	if err != nil {
		return nil, err
	}
	var moved []string
	var errs []error
	// Deepest first: a repository planted inside a planted .git is
	// moved aside before the .git that holds it is renamed. One that
	// cannot be moved does not keep the others where they are.
	slices.Sort(planted)
	for _, p := range slices.Backward(planted) {
		dst, err := moveAside(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		line := p + " -> " + dst
		if fi, err := os.Lstat(dst); err == nil && fi.IsDir() && filepath.Base(p) == ".git" {
			if _, err := os.Lstat(filepath.Join(dst, "HEAD")); err == nil {
				head, err := moveAside(filepath.Join(dst, "HEAD"))
				if err != nil {
					errs = append(errs, err)
				} else {
					line += " (its HEAD -> " + filepath.Base(head) + ")"
				}
			}
		}
		moved = append(moved, line)
	}
	slices.Sort(moved)
	return moved, errors.Join(errs...)
}

// moveAside renames p to p + QuarantineSuffix (or .1, .2, … after it
// when that is taken) and returns the new name. It never follows a
// symlink on the way to p — another sandbox on the same project, still
// running, could have put one in place of a directory since the scan, to
// have root rename a repository elsewhere — and never replaces what is at
// the new name (renameInDir).
func moveAside(p string) (string, error) {
	dir, name := filepath.Dir(p), filepath.Base(p)
	for i := 0; i < 1000; i++ {
		dst := name + QuarantineSuffix
		if i > 0 {
			dst = fmt.Sprintf("%s.%d", dst, i)
		}
		err := renameInDir(dir, name, dst)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("quarantine %s: %w", p, err)
		}
		return filepath.Join(dir, dst), nil
	}
	return "", fmt.Errorf("quarantine %s: 1000 names taken beside it", p)
}
