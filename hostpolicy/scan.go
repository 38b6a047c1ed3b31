// Package hostpolicy is the host side of policy mode: it reads what the
// policy compiler (spec, which touches nothing) needs to know about this
// host — paths, owners, the caller's environment — scans the readable
// roots for what must be masked or made read-only, and checks a compiled
// bundle against the host again at create, when the workload may have
// moved things since the bundle was compiled.
package hostpolicy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// maxGitConfig bounds what is read of a repository's config to strip it.
const maxGitConfig = 1 << 20

// Scan walks each root and lists what spec.Classify finds: secret-shaped
// files, unix sockets, repositories (with the metadata their git directory
// has, submodules' gitdirs under .git/modules included), .git files and
// tool configuration. It does not follow symlinks and does not cross into
// other filesystems (the sandbox's binds are not recursive: what is
// mounted below a root is not visible there). A directory it cannot read
// is skipped: the sandbox, which is never more privileged than the caller
// on host files, cannot read it either.
func Scan(roots []string) ([]spec.Found, error) {
	var out []spec.Found
	seen := map[string]bool{}
	repos := map[string]bool{} // git directories reported
	addRepo := func(path string) {
		repos[path] = true
		out = append(out, spec.Found{Path: path, Kind: spec.FoundRepo, Meta: repoMeta(path)})
		for _, sub := range modules(path) {
			repos[sub.Path] = true
			out = append(out, sub)
		}
	}
	for _, root := range roots {
		fi, err := os.Lstat(root)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("scan %s: %w", root, err)
		}
		if !fi.IsDir() {
			continue
		}
		dev := devOf(fi)
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() && path != root {
					return filepath.SkipDir
				}
				return nil
			}
			if seen[path] {
				return filepath.SkipDir
			}
			if d.IsDir() && path != root {
				if info, err := d.Info(); err == nil && devOf(info) != dev {
					return filepath.SkipDir
				}
			}
			if !d.IsDir() && d.Name() == "HEAD" {
				// A git directory by what it holds (a bare repository,
				// whatever its name): its HEAD says so.
				if dir := filepath.Dir(path); !repos[dir] && filepath.Base(dir) != ".git" && isGitDir(dir) {
					addRepo(dir)
				}
			}
			kind, ok := spec.Classify(d.Name(), d.IsDir(), d.Type()&fs.ModeSocket != 0)
			if !ok || path == root {
				return nil
			}
			seen[path] = true
			if kind == spec.FoundRepo {
				addRepo(path)
				// Keep walking inside .git: a secret moved there is
				// still a secret (the scan covers .git too).
				return nil
			}
			out = append(out, spec.Found{Path: path, Kind: kind})
			if kind == spec.FoundToolConfig && d.IsDir() {
				return filepath.SkipDir // read-only as a whole
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", root, err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// isGitDir says whether git takes dir for a git directory when it looks
// there (setup.c's is_git_directory): a HEAD that is not a directory, and
// objects/ and refs/ directories, followed as git follows them. git finds
// a bare repository by what it holds, not by its name, and a prompt's git
// status inside one reads its config.
func isGitDir(dir string) bool {
	head, err := os.Lstat(filepath.Join(dir, "HEAD"))
	if err != nil || head.IsDir() {
		return false
	}
	isDir := func(name string) bool {
		fi, err := os.Stat(filepath.Join(dir, name))
		return err == nil && fi.IsDir()
	}
	return isDir("objects") && isDir("refs")
}

// repoMeta lists the spec.RepoMetadata entries gitdir has.
func repoMeta(gitdir string) []string {
	var meta []string
	for _, m := range spec.RepoMetadata {
		if _, err := os.Lstat(filepath.Join(gitdir, m)); err == nil {
			meta = append(meta, m)
		}
	}
	return meta
}

// modules lists the submodules' git directories under gitdir/modules
// (nested: modules/a/modules/b): a directory with a config and a HEAD.
func modules(gitdir string) []spec.Found {
	var out []spec.Found
	base := filepath.Join(gitdir, "modules")
	_ = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == base {
			return nil
		}
		_, cErr := os.Lstat(filepath.Join(path, "config"))
		_, hErr := os.Lstat(filepath.Join(path, "HEAD"))
		if cErr == nil && hErr == nil {
			out = append(out, spec.Found{Path: path, Kind: spec.FoundRepo, Meta: repoMeta(path)})
		}
		return nil
	})
	return out
}

// GitConfigs reads the config of each repository found, for the
// compiler to strip of credentials.
func GitConfigs(found []spec.Found) map[string]string {
	out := map[string]string{}
	for _, f := range found {
		if f.Kind != spec.FoundRepo {
			continue
		}
		p := filepath.Join(f.Path, "config")
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxGitConfig {
			continue
		}
		if data, err := readRegular(p, maxGitConfig); err == nil {
			out[p] = string(data)
		}
	}
	return out
}
