package hostpolicy

import (
	"encoding/json"
	"fmt"
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
// directory or file) that did not exist when the bundle was compiled — a
// shell prompt runs git status in it on cd — and a commondir file in a
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
		if commondir := filepath.Join(f.Path, "commondir"); f.Kind == spec.FoundRepo && filepath.Base(f.Path) == ".git" {
			if _, err := os.Lstat(commondir); err == nil && m.writableAnywhere(f.Path) {
				out = append(out, commondir)
			}
		}
	}
	return out, nil
}

// Quarantine moves what Planted finds aside (name + QuarantineSuffix),
// where no git looks, and returns where each went. It runs at teardown,
// when nothing can write there any more.
func Quarantine(s *specs.Spec) ([]string, error) {
	planted, err := Planted(s)
	if err != nil {
		return nil, err
	}
	var moved []string
	for _, p := range planted {
		dst := p + QuarantineSuffix
		for i := 1; ; i++ {
			if _, err := os.Lstat(dst); os.IsNotExist(err) {
				break
			}
			dst = fmt.Sprintf("%s%s.%d", p, QuarantineSuffix, i)
		}
		if err := os.Rename(p, dst); err != nil {
			return moved, fmt.Errorf("quarantine %s: %w", p, err)
		}
		moved = append(moved, p+" -> "+dst)
	}
	return moved, nil
}
