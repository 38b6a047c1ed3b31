package linux

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// maxInterpreters is how deep the kernel follows "#!" lines (binfmt_script
// with the depth fs/exec.c allows): deeper, its exec fails anyway.
const maxInterpreters = 4

// Executable resolves the container's process.args[0] in the init's root,
// from the host, and identifies it (hooks.Executable); without digest, by
// its stat alone (SHA256 empty).
func (c *container) Executable(proc *specs.Process, digest bool) (*hooks.Executable, error) {
	if c.root > 0 {
		return resolveExecutable(c.root, proc, digest)
	}
	root, err := c.openRoot()
	if err != nil {
		return nil, err
	}
	defer unix.Close(root)
	return resolveExecutable(root, proc, digest)
}

func (c *container) openRoot() (int, error) {
	root, err := unix.Open("/proc/"+strconv.Itoa(c.InitPid())+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the root of init pid %d: %w", c.InitPid(), err)
	}
	return root, nil
}

// HoldRoot keeps the init's root and its mount namespace open until
// release: an init that refuses its executable and exits leaves the file
// it refused to be looked at, mounts and all, to say why.
func (c *container) HoldRoot() (release func(), err error) {
	mnt, err := unix.Open("/proc/"+strconv.Itoa(c.InitPid())+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the mount namespace of init pid %d: %w", c.InitPid(), err)
	}
	root, err := c.openRoot()
	if err != nil {
		unix.Close(mnt)
		return nil, err
	}
	c.root, c.mntNS = root, mnt
	return func() {
		unix.Close(c.root)
		unix.Close(c.mntNS)
		c.root, c.mntNS = 0, 0
	}, nil
}

// resolveExecutable finds args[0] below root as libcontainer's init does
// (exec.LookPath after it changed to the cwd, with the process's PATH): a
// name with a slash is taken as it is, relative to the cwd; a bare name is
// looked up in each PATH entry for a regular file with an execute bit.
// Every lookup stays inside root (RESOLVE_IN_ROOT: "..", absolute
// symlinks and magic links cannot leave it).
func resolveExecutable(root int, proc *specs.Process, digest bool) (*hooks.Executable, error) {
	if proc == nil || len(proc.Args) == 0 || proc.Args[0] == "" {
		return nil, errors.New("the process has no args[0]")
	}
	name, cwd := proc.Args[0], proc.Cwd
	if cwd == "" {
		cwd = "/"
	}
	if strings.Contains(name, "/") {
		return identifyExecutable(root, inCwd(cwd, name), cwd, digest, 0)
	}
	pathEnv := ""
	for _, kv := range proc.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v // the last one wins, as it does for the init
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := inCwd(cwd, path.Join(dir, name))
		if isExecutable(root, p) {
			return identifyExecutable(root, p, cwd, digest, 0)
		}
	}
	return nil, fmt.Errorf("%q: not found in the process's PATH (%q) in the container", name, pathEnv)
}

// inCwd makes p absolute against cwd, as a lookup by the init would.
func inCwd(cwd, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}

// openInRoot opens p below root; no lookup step may leave it.
func openInRoot(root int, p string, flags int) (int, error) {
	if flags&unix.O_PATH == 0 {
		flags |= unix.O_NOCTTY // openat2 refuses it with O_PATH
	}
	return unix.Openat2(root, strings.TrimPrefix(p, "/"), &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// isExecutable is exec.LookPath's test: a regular file with an execute bit.
func isExecutable(root int, p string) bool {
	fd, err := openInRoot(root, p, unix.O_PATH)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o111 != 0
}

// identifyExecutable reads p's identity and digest, and that of its
// interpreter if it is a script. The file is stat'd before and after it is
// read: a write meanwhile moves ctime, and the digest would describe
// neither version, so that is an error, not an identity.
func identifyExecutable(root int, p, cwd string, digest bool, depth int) (*hooks.Executable, error) {
	// O_NONBLOCK: a fifo planted at the path must not block the runtime.
	fd, err := openInRoot(root, p, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("open %s in the container: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var before, after unix.Stat_t
	if err := unix.Fstat(fd, &before); err != nil {
		return nil, fmt.Errorf("stat %s in the container: %w", p, err)
	}
	if before.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s in the container is not a regular file", p)
	}
	if before.Mode&0o111 == 0 {
		return nil, fmt.Errorf("%s in the container is not executable", p)
	}
	head := make([]byte, 256)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s in the container: %w", p, err)
	}
	h := sha256.New()
	hashedAt := time.Now().UnixNano()
	if digest {
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
			return nil, fmt.Errorf("read %s in the container: %w", p, err)
		}
	}
	if err := unix.Fstat(fd, &after); err != nil {
		return nil, fmt.Errorf("stat %s in the container: %w", p, err)
	}
	if before.Ctim != after.Ctim || before.Size != after.Size {
		return nil, fmt.Errorf("%s in the container changed while the runtime read it", p)
	}
	e := &hooks.Executable{
		Path: p, Dev: uint64(before.Dev), Ino: before.Ino, Size: before.Size, //nolint:unconvert // Dev is uint32 on some arches
		Mtime: before.Mtim.Nano(), Ctime: before.Ctim.Nano(),
	}
	var sfs unix.Statfs_t
	if unix.Fstatfs(fd, &sfs) == nil {
		e.FSType = uint64(sfs.Type) //nolint:gosec // a magic number, never negative in meaning
	}
	if digest {
		e.SHA256, e.HashedAt = hex.EncodeToString(h.Sum(nil)), hashedAt
	}
	if interp, ok := hooks.Interpreter(head[:n]); ok {
		if depth >= maxInterpreters {
			return nil, fmt.Errorf("%s in the container: more than %d interpreters deep", p, maxInterpreters)
		}
		if e.Interpreter, err = identifyExecutable(root, inCwd(cwd, interp), cwd, digest, depth+1); err != nil {
			return nil, fmt.Errorf("the interpreter of %s: %w", p, err)
		}
	}
	return e, nil
}
