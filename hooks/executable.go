package hooks

import (
	"bytes"
	"fmt"
	"strings"
)

// Executable identifies the file a container's process will exec: its
// process.args[0] resolved in the container's root the way the init
// resolves it (PATH of process.env, the cwd for a relative path), read from
// the host. It is recorded at create and checked at start and after the
// exec, so that a file replaced or rewritten between create and start —
// by another container sharing the rootfs, by an earlier run that wrote
// the project — is not what runs (pre-launch check 10, FC-PRE-004).
type Executable struct {
	// Path is where the init finds it, in the container's root.
	Path string `json:"path"`
	// Dev, Ino name the file; Size, Mtime and Ctime (nanoseconds) change
	// with its content. Ctime cannot be set by a process: any write moves
	// it.
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"`
	Ctime int64  `json:"ctime"`
	// SHA256 is the content's digest, hex; HashedAt (Unix nanoseconds)
	// when the runtime began to read it.
	SHA256   string `json:"sha256"`
	HashedAt int64  `json:"hashedAt,omitempty"`
	// FSType is the filesystem's magic number (statfs f_type): whether
	// its stat can stand for its content (StatTracksContent).
	FSType uint64 `json:"fsType,omitempty"`
	// Interpreter is, for a "#!" script, the file the kernel execs in its
	// place (itself possibly a script): what /proc/<pid>/exe shows.
	Interpreter *Executable `json:"interpreter,omitempty"`
}

// String names the file for a verdict: path, device:inode and the
// digest's first 12 hex digits.
func (e *Executable) String() string {
	if e == nil {
		return "none"
	}
	if e.SHA256 == "" {
		return fmt.Sprintf("%s (%d:%d, unchanged by its stat)", e.Path, e.Dev, e.Ino)
	}
	return fmt.Sprintf("%s (%d:%d, sha256 %.12s)", e.Path, e.Dev, e.Ino, e.SHA256)
}

// Exec is the file /proc/<pid>/exe shows once the process exec'd: the
// innermost interpreter of a script, the file itself otherwise.
func (e *Executable) Exec() *Executable {
	for e != nil && e.Interpreter != nil {
		e = e.Interpreter
	}
	return e
}

// Differs says how now differs from e (and its interpreters), "" when it
// is the same file with the same content. A now read without its digest
// is compared by its stat: any write moves ctime.
func (e *Executable) Differs(now *Executable) string {
	switch {
	case e == nil || now == nil:
		return "no identity to compare"
	case e.Path != now.Path:
		return fmt.Sprintf("%s now resolves to %s", e.Path, now.Path)
	case e.Dev != now.Dev || e.Ino != now.Ino:
		return fmt.Sprintf("%s was replaced: %d:%d, recorded %d:%d", e.Path, now.Dev, now.Ino, e.Dev, e.Ino)
	case (now.SHA256 != "" && e.SHA256 != now.SHA256) || e.Size != now.Size:
		return fmt.Sprintf("%s was rewritten: sha256 %.12s, %d bytes; recorded %.12s, %d bytes", e.Path, now.SHA256, now.Size, e.SHA256, e.Size)
	case e.Ctime != now.Ctime || e.Mtime != now.Mtime:
		// Same bytes, but written to since: what ran between the two
		// looks could have been anything. Refused as well.
		return fmt.Sprintf("%s was written to since it was recorded (ctime changed)", e.Path)
	case (e.Interpreter == nil) != (now.Interpreter == nil):
		return fmt.Sprintf("%s: its interpreter line changed", e.Path)
	case e.Interpreter != nil:
		return e.Interpreter.Differs(now.Interpreter)
	}
	return ""
}

// CheckExecutable judges, at start before the fifo opens, that the file
// the process is about to exec is the one recorded at create. now is the
// file as it resolves at this moment, or the error resolving it.
func CheckExecutable(recorded, now *Executable, err error) Result {
	r := Result{Check: "P1/executable", Evidence: HostFact, Expected: recorded.String()}
	switch {
	case err != nil:
		r.Verdict, r.Found = Fail, err.Error()
	case recorded.Differs(now) != "":
		r.Verdict, r.Found = Fail, recorded.Differs(now)
	default:
		r.Verdict, r.Found = Pass, now.String()
	}
	return r
}

// CheckExecuted judges, after the exec, the file the process runs
// (/proc/<pid>/exe: dev, ino) against the one recorded. Equal is PASS.
// Otherwise the process either exec'd another file itself since (allowed:
// nothing is proven about the first, PARTIAL), or the file at the
// recorded path was swapped at the exec: then the process runs what the
// path resolves to now, which is not what was recorded, and that is a
// FAIL. A process already gone is UNAVAILABLE, unless the path is now
// another file (FAIL: the init refuses one, see the libcontainer patch).
// current is the recorded path resolved again (nil if it no longer
// resolves, or was not looked at).
func CheckExecuted(recorded *Executable, exe [2]uint64, exeErr error, current *Executable) Result {
	want := recorded.Exec()
	r := Result{Check: "P1/executed", Evidence: HostFact, Expected: fmt.Sprintf("/proc/<pid>/exe is %s", want)}
	switch {
	case exeErr != nil && current != nil && recorded.Differs(current) != "":
		// Gone, and the path is another file than recorded: the init
		// refused it, or ran it; either way not what was verified.
		r.Verdict, r.Found = Fail, "process gone, and "+recorded.Differs(current)
	case exeErr != nil:
		r.Verdict, r.Found = Unavailable, "process gone: "+exeErr.Error()
	case exe == [2]uint64{want.Dev, want.Ino}:
		r.Verdict, r.Found = Pass, fmt.Sprintf("%d:%d", exe[0], exe[1])
	case current.Exec() != nil && exe == [2]uint64{current.Exec().Dev, current.Exec().Ino}:
		r.Verdict, r.Found = Fail, fmt.Sprintf("runs %d:%d, the file now at %s: it was replaced as the process exec'd", exe[0], exe[1], current.Exec().Path)
	default:
		r.Verdict, r.Found = Partial, fmt.Sprintf("runs %d:%d: the program exec'd another file before the host looked", exe[0], exe[1])
	}
	return r
}

// Interpreter parses a "#!" line as the kernel does (binfmt_script): the
// interpreter is the first word after "#!", blanks and tabs skipped; the
// line ends at a newline or after 255 bytes. ok is false for a file that
// is not a script.
func Interpreter(head []byte) (string, bool) {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", false
	}
	line := head[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	if len(line) > 253 {
		line = line[:253]
	}
	f := strings.FieldsFunc(string(line), func(r rune) bool { return r == ' ' || r == '\t' })
	if len(f) == 0 {
		return "", false
	}
	return f[0], true
}

// racyWindow is how close to the digest a change of the file must be for
// its ctime to prove nothing: a write stamps ctime with the time of the
// write, at the clock's granularity (a jiffy, or coarser on some
// filesystems), so a write just before or during the read may carry a
// ctime that predates the digest.
const racyWindow = int64(2e9)

// Settled says a file whose stat is unchanged since e was recorded cannot
// have other bytes than e's digest describes: its ctime and mtime are well
// before the digest was taken, and any write since would have moved ctime
// to the time of that write, later still. A file changed close to the
// digest must be read again (git's "racy" index entries, the same rule).
func (e *Executable) Settled() bool {
	for ; e != nil; e = e.Interpreter {
		if e.HashedAt == 0 || e.Ctime > e.HashedAt-racyWindow || e.Mtime > e.HashedAt-racyWindow {
			return false
		}
	}
	return true
}

// statTracked are the filesystems whose ctime the kernel itself moves on
// every change of a file's content (linux/magic.h): local disk and memory
// filesystems, and overlayfs over them. A FUSE or network filesystem
// reports what its server says, which may keep a stat while the bytes
// change: its files are always read.
var statTracked = map[uint64]bool{
	0xEF53:     true, // ext2/3/4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0x794C7630: true, // overlayfs
	0xF2F52010: true, // f2fs
	0xE0F5E1E2: true, // erofs
	0x73717368: true, // squashfs
}

// StatTracksContent says e, and every interpreter it names, is on a
// filesystem where an unchanged stat means unchanged bytes (given
// Settled's margin).
func (e *Executable) StatTracksContent() bool {
	for ; e != nil; e = e.Interpreter {
		if !statTracked[e.FSType] {
			return false
		}
	}
	return true
}
