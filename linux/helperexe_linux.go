package linux

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// The helper executables. Every container's init, and every process
// exec adds, is a process libcontainer starts from a binary and that then
// runs Go's start-up and every package init of that binary before it does
// any of the container's work — milliseconds on the path of every create
// and exec. runc starts it from its own binary; so does this backend when
// the build carries nothing else. make build compiles
// cmd/vetto-runtime-init (linux/containerinit: libcontainer's init and
// the pre-exec step, none of the CLI, policy, relay, HTTP or TLS code) and
// embeds it (embedinit build tag, helperexe_embed_linux.go); the backend
// writes it once into the runtime's private directory and hands its path
// to libcontainer (Process.InitExecutable), which starts each init from a
// sealed, read-only view of that file as it would of its own binary
// (CVE-2019-5736).
//
// The egress relay is the other way round: its code (package relay, with
// net/http, crypto/tls and x509) is what would slow every command of the
// runtime down, were it linked in, for the few containers that have a
// network. make build compiles it as cmd/vetto-runtime-relay and embeds
// it the same way; create starts each relay from the file written here
// (relay_linux.go). docs/architecture.md, "The helper executables".

// Each helper's file in the runtime's bin directory is named by its
// prefix and its sha256, so that two builds never share a name, and a
// name says what the file holds.
const (
	initExePrefix  = "vetto-runtime-init-"
	relayExePrefix = "vetto-runtime-relay-"
)

// keepHelperExes is how many executables of other builds, of each helper,
// stay in the bin directory: the ones runtimes of other versions on this
// host (a packaged one beside a build under test) still use. Older ones
// go.
const keepHelperExes = 3

// embeddedExe is a helper executable this binary carries, its sha256
// (hex) and the prefix its file is named by: data and sum are empty in a
// build without one.
type embeddedExe struct {
	prefix string
	data   string
	sum    string
}

// name is the file name of the executable in the bin directory.
func (e embeddedExe) name() string { return e.prefix + e.sum[:32] }

// helperExes resolves, once per process and bin directory, the path of
// one helper executable.
type helperExes struct {
	mu    sync.Mutex
	exe   embeddedExe
	dir   string
	path  string
	err   error
	ready bool
}

// This process's: the embedded executables, if any.
var (
	theInitExes  = &helperExes{exe: embeddedInit}
	theRelayExes = &helperExes{exe: embeddedRelay}
)

// embeds says whether this build carries the executable.
func (e *helperExes) embeds() bool { return e.exe.data != "" }

// resolve is the executable in dir, written there if it is not yet; ""
// with no error when this build carries none or dir is "".
func (e *helperExes) resolve(dir string) (string, error) {
	if e.exe.data == "" || dir == "" {
		return "", nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ready && e.dir == dir {
		return e.path, e.err
	}
	e.path, e.err = e.exe.install(dir)
	e.dir, e.ready = dir, true
	return e.path, e.err
}

// initExecutable is the init executable to start inits from: "" (then
// libcontainer starts the init from this binary, as runc does) when this
// build carries none, dir is "", or the file cannot be written or trusted
// — which costs the init's start-up time, never a check, so it is a debug
// line, not an error.
func initExecutable(dir string) string {
	p, err := theInitExes.resolve(dir)
	if err != nil {
		logrus.Debugf("init executable: %v; starting inits from the runtime's own binary", err)
	}
	return p
}

// resolved is the path resolve last returned in this process, "" if it
// never ran or failed: for the processes a container already built starts
// (startContainer hooks), whose command had no request to name the
// directory in.
func (e *helperExes) resolved() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.path
}

// install returns the path of the init executable in dir, writing it there
// first unless a file of the runtime's own, with its name and size and
// nobody else's write access, is there already. dir is the runtime's
// private directory (the core made it: owned by this user, writable by
// nobody else), so a file in it that passes is the one a runtime of this
// build wrote there: nobody but this user (or root) could have put it
// there, and they could as well replace the runtime's own binary.
func (e embeddedExe) install(dir string) (string, error) {
	if len(e.sum) < 32 {
		return "", fmt.Errorf("embedded %s executable has no digest (%q)", e.what(), e.sum)
	}
	path := filepath.Join(dir, e.name())
	err := e.usable(path)
	if err == nil {
		return path, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		logrus.Debugf("%s executable %s: %v; writing it again", e.what(), path, err)
	}
	if err := e.write(dir, path); err != nil {
		return "", err
	}
	e.prune(dir, filepath.Base(path))
	return path, nil
}

// usable says why the file at path is not the executable to run, nil
// if it is: a regular file (not a link), this user's, 0500, one link, and
// the embedded executable's size.
func (e embeddedExe) usable(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("not a regular file (mode %o)", st.Mode)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("owned by uid %d, not %d", st.Uid, os.Geteuid())
	case st.Mode&0o7777 != 0o500:
		return fmt.Errorf("mode %o, not 500", st.Mode&0o7777)
	case st.Nlink != 1:
		return fmt.Errorf("%d links, not 1", st.Nlink)
	case st.Size != int64(len(e.data)):
		return fmt.Errorf("%d bytes, not %d", st.Size, len(e.data))
	}
	return nil
}

// write puts the embedded executable at path: into a new file beside it,
// checked against its digest, made 0500, synced, then renamed over path,
// so that no runtime ever finds a partly written file under the name.
func (e embeddedExe) write(dir, path string) (retErr error) {
	sum := sha256.Sum256([]byte(e.data))
	if hex.EncodeToString(sum[:]) != e.sum {
		return fmt.Errorf("embedded %s executable: sha256 %x, the build says %s", e.what(), sum, e.sum)
	}
	f, err := os.CreateTemp(dir, e.tempPrefix()+"*")
	if err != nil {
		return fmt.Errorf("write the %s executable: %w", e.what(), err)
	}
	tmp := f.Name()
	defer func() {
		if retErr != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.WriteString(e.data); err != nil {
		return fmt.Errorf("write the %s executable %s: %w", e.what(), tmp, err)
	}
	if err := f.Chmod(0o500); err != nil {
		return fmt.Errorf("write the %s executable %s: %w", e.what(), tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write the %s executable %s: %w", e.what(), tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the %s executable %s: %w", e.what(), tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write the %s executable: %w", e.what(), err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// prune removes this helper's executables of other builds from dir but
// the keepHelperExes most recently written, and what a write of it that
// died left (tempPrefix). A runtime of a removed build writes its own
// again when it next needs it.
func (e embeddedExe) prune(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type old struct {
		name string
		mod  int64
	}
	var others []old
	for _, ent := range ents {
		name := ent.Name()
		switch {
		case name == keep:
		case strings.HasPrefix(name, e.tempPrefix()):
			if fi, err := ent.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
				os.Remove(filepath.Join(dir, name))
			}
		case strings.HasPrefix(name, e.prefix):
			if fi, err := ent.Info(); err == nil {
				others = append(others, old{name, fi.ModTime().UnixNano()})
			}
		}
	}
	sort.Slice(others, func(i, j int) bool { return others[i].mod > others[j].mod })
	for i := keepHelperExes; i < len(others); i++ {
		os.Remove(filepath.Join(dir, others[i].name))
	}
}

// what names the helper in messages: "init", "relay".
func (e embeddedExe) what() string {
	return strings.TrimSuffix(strings.TrimPrefix(e.prefix, "vetto-runtime-"), "-")
}

// tempPrefix names a file write is still writing: ".init-", ".relay-".
func (e embeddedExe) tempPrefix() string { return "." + e.what() + "-" }
