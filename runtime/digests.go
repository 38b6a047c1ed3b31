package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// digestCacheDir is the directory under the evidence directory that
// remembers the sha256 of executables already read, for every state root
// of the host.
const digestCacheDir = "digests"

// maxDigestEntries bounds the cache: beyond it, a new entry first clears
// it (a miss costs one read of the file, nothing else).
const maxDigestEntries = 4096

// digestCache remembers, by the file's identity (device, inode, size,
// mtime, ctime, filesystem), the digest create took of a container's
// executable, so that the next container running the same file (the
// project's node or python, run again and again) does not read it all
// again: for a 100 MB binary that read is most of a create.
//
// An entry is kept only for a file that stood still long before it was
// read (hooks.Executable.Settled) on a filesystem whose ctime the kernel
// moves (hooks.Executable.StatTracksContent): any write since moves ctime
// past the entry's key, and a process cannot set ctime back (only the
// clock can, which needs CAP_SYS_TIME on the host). Anything else is read
// in full, every time. The directory is in the evidence directory, which
// must be private to the runtime's user (Evidence.ensure), beside the
// frozen hashes that already vouch for containers.
type digestCache struct{ ev Evidence }

func (s Store) digests() digestCache { return digestCache{ev: s.Evidence} }

func digestKey(e *hooks.Executable) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x-%x", e.Dev, e.Ino, e.Size, e.Mtime, e.Ctime, e.FSType)
}

// fill sets the digest of e and of each interpreter it names from the
// cache; false (e unchanged) unless every one of them is there.
func (d digestCache) fill(e *hooks.Executable) bool {
	if d.ev.Dir == "" || !e.StatTracksContent() {
		return false
	}
	dir, err := d.private()
	if err != nil {
		return false
	}
	type hit struct {
		sum string
		at  int64
	}
	var hits []hit
	for x := e; x != nil; x = x.Interpreter {
		data, err := readNoFollow(filepath.Join(dir, digestKey(x)))
		if err != nil {
			return false
		}
		sum, at, ok := strings.Cut(strings.TrimSpace(string(data)), " ")
		n, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil || len(sum) != 64 {
			return false
		}
		hits = append(hits, hit{sum, n})
	}
	i := 0
	for x := e; x != nil; x = x.Interpreter {
		x.SHA256, x.HashedAt = hits[i].sum, hits[i].at
		i++
	}
	// The entry was written for a settled file; a key that matches with a
	// digest taken too close to the file's times is not used.
	if !e.Settled() {
		for x := e; x != nil; x = x.Interpreter {
			x.SHA256, x.HashedAt = "", 0
		}
		return false
	}
	return true
}

// remember writes the digests of e and its interpreters that can be
// trusted later. Errors are dropped: a cache that cannot be written is a
// cache that misses.
func (d digestCache) remember(e *hooks.Executable) {
	if d.ev.Dir == "" || !e.StatTracksContent() || !e.Settled() {
		return
	}
	dir, err := d.ev.ensure(digestCacheDir)
	if err != nil {
		return
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) >= maxDigestEntries {
		for _, en := range entries {
			_ = os.Remove(filepath.Join(dir, en.Name()))
		}
	}
	for x := e; x != nil; x = x.Interpreter {
		if x.SHA256 == "" {
			continue
		}
		_ = writeFileAtomic(filepath.Join(dir, digestKey(x)), []byte(x.SHA256+" "+strconv.FormatInt(x.HashedAt, 10)+"\n"), 0o600)
	}
}

// private is the cache's directory if it and the evidence directory are
// the runtime user's alone (nobody else could have written an entry).
func (d digestCache) private() (string, error) {
	dir := filepath.Join(d.ev.Dir, digestCacheDir)
	if err := privateDir(d.ev.Dir); err != nil {
		return "", err
	}
	// The cache's own directory: this user's, writable by nobody else
	// (the sticky-bit allowance privateDir makes for /tmp is no good here:
	// another user could add an entry).
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 || !ownedBySelf(fi) {
		return "", fmt.Errorf("%s: not a directory private to this user", dir)
	}
	return dir, nil
}

// identifyExecutable is the create-time identity of the file c's process
// will exec, its digest from the cache when the cache can vouch for it,
// else read in full (and remembered).
func identifyExecutable(ec ExecutableContainer, proc *specs.Process, cache digestCache) (*hooks.Executable, error) {
	if e, err := ec.Executable(proc, false); err == nil && cache.fill(e) {
		return e, nil
	}
	e, err := ec.Executable(proc, true)
	if err == nil {
		cache.remember(e)
	}
	return e, err
}
