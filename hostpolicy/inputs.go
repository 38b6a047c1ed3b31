package hostpolicy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// ErrInput marks the caller's input as the cause (a --project that is not a
// directory, a broad project without the flag that allows it): callers
// report it as bad input.
var ErrInput = errors.New("invalid input")

// kindError is an error of several kinds whose message is its own.
type kindError struct {
	kinds []error
	msg   string
}

func (e *kindError) Error() string   { return e.msg }
func (e *kindError) Unwrap() []error { return e.kinds }

// unsafef is bad input that would hand the sandbox the host
// (spec.ErrUnsafe).
func unsafef(format string, args ...any) error {
	return &kindError{kinds: []error{ErrInput, spec.ErrUnsafe}, msg: fmt.Sprintf(format, args...)}
}

// Options are what the caller decides of a compile.
type Options struct {
	// Project is $PROJECT ("" is the current directory); Rootfs a root
	// filesystem to use instead of the host's system directories.
	Project, Rootfs string
	// Args is the command.
	Args []string
	// SandboxID is runtime.toml's [policy] sandbox_id (0: the default).
	SandboxID uint32
	// AllowBroadProject is --dangerously-allow-project: a project of /,
	// $HOME or a system directory, which is refused otherwise.
	AllowBroadProject bool
}

// broadProjects are directories that make no project: mounted read-write,
// they hand the sandbox the user's whole account or the host.
var broadProjects = []string{"/", "/etc", "/usr", "/tmp", "/var", "/boot", "/root", "/home", "/opt", "/srv", "/bin", "/sbin", "/lib", "/lib64", "/proc", "/sys", "/dev", "/run"}

// Inputs gathers what the compiler needs from this host and process;
// Found is left to Compile.
func Inputs(o Options) (spec.Inputs, error) {
	var in spec.Inputs
	var err error
	project := o.Project
	if project == "" {
		project = "."
	}
	if in.Project, err = existingDir("--project", project); err != nil {
		return in, err
	}
	if o.Rootfs != "" {
		if in.Rootfs, err = existingDir("--rootfs", o.Rootfs); err != nil {
			return in, err
		}
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		// No usable $HOME: "/" turns off the $HOME tmpfs and every
		// $HOME path resolves under / (and is checked as such).
		home = "/"
	}
	in.Home = realPath(home)
	if !o.AllowBroadProject {
		for _, b := range broadProjects {
			if in.Project == b {
				return in, unsafef("--project %s is not a project: the sandbox would write all of it; name the project's own directory (or pass --dangerously-allow-project)", in.Project)
			}
		}
		if in.Project == in.Home {
			return in, unsafef("--project %s is your home directory: the sandbox would write all of it (~/.bashrc, ~/.config, …); name the project's own directory (or pass --dangerously-allow-project)", in.Project)
		}
	}
	if fi, err := os.Stat(in.Project); err == nil {
		if uid, gid, ok := ownerOf(fi); ok {
			in.ProjectUID, in.ProjectGID = uid, gid
		}
	}
	if fi, err := os.Stat(in.Home); err == nil && in.Home != "/" {
		in.HomeUID, in.HomeGID, in.HomeOwned = ownerOf(fi)
	}
	if self, err := os.Executable(); err == nil {
		// The bundle's verification hooks run this very binary.
		in.RuntimePath = self
	}
	in.Tmp = realPath(os.TempDir())
	in.UID, in.GID = ids()
	in.SandboxID = o.SandboxID
	in.Env = os.Environ()
	in.Args = o.Args
	in.Arch = goruntime.GOARCH
	in.Lookup = LookupPath
	return in, nil
}

// Compile compiles p for this host. It compiles once to learn the roots
// the sandbox can read, scans them (Scan), and compiles again with what it
// found: every secret and socket masked, every repository and tool
// configuration read-only.
func Compile(p *spec.Policy, o Options) (*spec.Plan, error) {
	in, err := Inputs(o)
	if err != nil {
		return nil, err
	}
	first, err := spec.Explain(p, in)
	if err != nil {
		return nil, err
	}
	found, err := Scan(spec.ScanRoots(first.Spec))
	if err != nil {
		return nil, err
	}
	for _, f := range found {
		if f.Kind == spec.FoundRepo && filepath.Base(f.Path) == ".git" {
			if _, err := os.Lstat(filepath.Join(f.Path, "commondir")); err == nil {
				return nil, unsafef("%s/commondir sends git to another directory's config; no main repository has one, so a sandbox may have planted it: look at it and remove it", f.Path)
			}
		}
	}
	in.GitConfigs = GitConfigs(found)
	for i := range found {
		if found[i].Kind == spec.FoundRepo {
			found[i].Missing = missingMeta(found[i], in.GitConfigs)
		}
	}
	in.Found = append(found, HooksDirs(found, in.GitConfigs, userGitConfig(in.Home))...)
	if err := protectedSymlinks(in.Found, newMountView(first.Spec)); err != nil {
		return nil, err
	}
	return spec.Explain(p, in)
}

// protectedSymlinks refuses a path the compiler would bind read-only (a
// repository's metadata, a .git file, tool configuration, a hooks
// directory) that is a symlink where the sandbox can write: the bind
// would show what it points to — anywhere on the host, ~/.ssh as well —
// inside the sandbox, and an earlier sandbox may have planted it so.
func protectedSymlinks(found []spec.Found, m *mountView) error {
	var paths []string
	for _, f := range found {
		switch f.Kind {
		case spec.FoundRepo:
			for _, meta := range f.Meta {
				paths = append(paths, filepath.Join(f.Path, meta))
			}
		case spec.FoundGitFile, spec.FoundToolConfig, spec.FoundHooksDir:
			paths = append(paths, f.Path)
		}
	}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 || !m.writableAnywhere(filepath.Dir(p)) {
			continue
		}
		target, _ := os.Readlink(p)
		return unsafef("%s is a symlink (to %s) in a directory the sandbox can write: made read-only there, it would show what it points to inside the sandbox, and a sandbox may have planted it; look at it and remove it (or put what it points to in its place)", p, target)
	}
	return nil
}

// userGitConfig is the git configuration every repository of the user
// reads before its own: the system's, then the user's (XDG, then
// ~/.gitconfig), in the order git reads them, so that the last value
// found is the one git uses.
func userGitConfig(home string) string {
	files := []string{"/etc/gitconfig"}
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		files = append(files, filepath.Join(x, "git", "config"))
	} else if home != "/" {
		files = append(files, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "/" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	var b strings.Builder
	for _, f := range files {
		if data, err := readRegular(f, maxGitConfig); err == nil {
			b.Write(data)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// HooksDirs lists the directories the repositories found run hooks from
// by core.hooksPath (their own config, else base, the user's), other than
// their git directory's hooks/: the sandbox must not write there, nor
// make one that does not exist. A relative hooksPath is relative to the
// repository's work tree (core.worktree, the parent of a .git, or a bare
// repository itself), as git runs hooks there.
func HooksDirs(found []spec.Found, configs map[string]string, base string) []spec.Found {
	var out []spec.Found
	seen := map[string]bool{}
	for _, f := range found {
		if f.Kind != spec.FoundRepo {
			continue
		}
		config := configs[filepath.Join(f.Path, "config")]
		hooks, ok := spec.GitHooksPath(config)
		if !ok {
			if hooks, ok = spec.GitHooksPath(base); !ok {
				continue
			}
		}
		dir := resolveGitPath(hooks, worktreeOf(f.Path, config))
		if dir == "" {
			continue
		}
		if dir = LookupPath(dir).Real; dir == filepath.Join(f.Path, "hooks") || seen[dir] {
			continue
		}
		seen[dir] = true
		out = append(out, spec.Found{Path: dir, Kind: spec.FoundHooksDir})
	}
	return out
}

// worktreeOf is the work tree of the repository whose git directory is
// gitdir: core.worktree (relative to gitdir), else the parent of a .git,
// else the git directory itself (a bare repository's hooks run there).
func worktreeOf(gitdir, config string) string {
	if wt, ok := spec.GitConfigValue(config, "core", "worktree"); ok && wt != "" {
		return resolveGitPath(wt, gitdir)
	}
	if filepath.Base(gitdir) == ".git" {
		return filepath.Dir(gitdir)
	}
	return gitdir
}

// resolveGitPath resolves a path from a git config as git does: ~/ is the
// home directory, a relative path is relative to dir. "" when it cannot.
func resolveGitPath(p, dir string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return ""
		}
		return filepath.Join(realPath(home), rest)
	}
	if strings.HasPrefix(p, "~") {
		return "" // ~user: not this user's to know
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// missingMeta is spec.MissingRepoMetadata for a repository found, with
// its config read (configs, from GitConfigs): a config that exists but
// could not be read counts as turning extensions.worktreeConfig on.
func missingMeta(f spec.Found, configs map[string]string) []string {
	config := filepath.Join(f.Path, "config")
	content, read := configs[config]
	_, err := os.Lstat(config)
	return spec.MissingRepoMetadata(f.Meta, spec.WorktreeConfigOn(content) || (err == nil && !read))
}

// ids are the effective ids; a platform without them (Windows) compiles
// as root would.
func ids() (uid, gid uint32) {
	u, g := os.Geteuid(), os.Getegid()
	if u < 0 || g < 0 {
		return 0, 0
	}
	return uint32(u), uint32(g)
}

func existingDir(flag, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &kindError{kinds: []error{ErrInput, err}, msg: fmt.Sprintf("%s %s: %v", flag, dir, err)}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", &kindError{kinds: []error{ErrInput, err}, msg: fmt.Sprintf("%s %s: %v", flag, dir, err)}
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", &kindError{kinds: []error{ErrInput}, msg: fmt.Sprintf("%s %s is not a directory", flag, dir)}
	}
	return real, nil
}

// realPath resolves symlinks where it can, and otherwise keeps the path.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// LookupPath is spec.Inputs.Lookup on this host. A path that cannot be
// resolved is missing; its Real is its deepest resolvable parent's real
// path plus the rest, so a symlinked parent still counts.
func LookupPath(path string) spec.PathInfo {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		fi, err := os.Stat(real)
		switch {
		case err != nil:
			return spec.PathInfo{Kind: spec.PathMissing, Real: real}
		case fi.IsDir():
			return spec.PathInfo{Kind: spec.PathDir, Real: real}
		default:
			return spec.PathInfo{Kind: spec.PathFile, Real: real}
		}
	}
	rest := ""
	for dir := path; dir != "/" && dir != "."; {
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = filepath.Dir(dir)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return spec.PathInfo{Kind: spec.PathMissing, Real: filepath.Join(real, rest)}
		}
	}
	return spec.PathInfo{Kind: spec.PathMissing, Real: path}
}

// Within reports whether path is dir or below it.
func Within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}
