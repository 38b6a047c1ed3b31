package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultEvidenceDir is where a root runtime keeps what must outlive a
// container's state directory: the host-wide audit log and the hash of
// every frozen spec. runtime.toml [audit] dir moves it; a non-root
// runtime uses $XDG_STATE_HOME/vetto-runtime (~/.local/state/…).
const DefaultEvidenceDir = "/var/lib/vetto-runtime"

// Evidence is the host-wide evidence: one append-only JSONL log every
// container's transitions, verdicts, refusals and receipts go to, whoever
// created it (the CLI, containerd's shim, podman, Docker, the kubelet),
// and the frozen spec hashes start checks besides the state directory's.
// It lives apart from the state root (a tmpfs that delete empties), so it
// survives the container; and apart from config.json, so whoever can
// rewrite one cannot rewrite both.
type Evidence struct {
	Dir string
	// Fsync: verdicts, launches, refusals, receipts and fatal transitions
	// are fsync'd (runtime.toml [audit] fsync, default true).
	Fsync bool
}

// DefaultEvidence is the evidence dir for this process: DefaultEvidenceDir
// for root, the user's state directory for a normal user (NormalUser).
func DefaultEvidence() Evidence {
	if !NormalUser() {
		return Evidence{Dir: DefaultEvidenceDir, Fsync: true}
	}
	// Never a relative directory: create and start run from different
	// working directories (podman runs `start` itself, conmon `create`).
	dir := ""
	xdg := os.Getenv("XDG_RUNTIME_DIR")
	if os.Geteuid() == 0 && filepath.IsAbs(xdg) {
		// Root of a normal user's namespace (rootless podman): its
		// environment differs between create and start ($HOME is set
		// for one only), its runtime directory does not.
		dir = filepath.Join(xdg, "vetto-runtime-evidence")
	} else if base := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(base) {
		dir = filepath.Join(base, "vetto-runtime")
	} else if home := os.Getenv("HOME"); filepath.IsAbs(home) && home != "/" {
		dir = filepath.Join(home, ".local", "state", "vetto-runtime")
	} else if filepath.IsAbs(xdg) {
		// No home to keep it in: the user's runtime directory, which
		// lasts until the user's last session ends.
		dir = filepath.Join(xdg, "vetto-runtime-evidence")
	} else {
		dir = filepath.Join(os.TempDir(), "vetto-runtime-evidence-"+strconv.Itoa(os.Geteuid()))
	}
	return Evidence{Dir: dir, Fsync: true}
}

// LogPath is the host-wide audit log.
func (e Evidence) LogPath() string { return filepath.Join(e.Dir, "audit.jsonl") }

// frozenPath is where the frozen hash of container id under state root
// lives: one file per container, named by a hash of the root and the id
// together (containers of two roots may share an id), flat in frozen/.
// A directory per root, as before, cost every create a mkdir and every
// delete of a root's last container an rmdir; on a journal-less ext4
// under 32 parallel runs each new inode there cost about 0.4 ms of CPU
// (docs/performance.md, thirteenth round).
func (e Evidence) frozenPath(root, id string) string {
	sum := sha256.Sum256([]byte(root + "\x00" + id))
	return filepath.Join(e.Dir, "frozen", hex.EncodeToString(sum[:16]))
}

// legacyFrozenPath is where a runtime before the flat layout kept the
// hash: frozen/<hash of root>/<id>. A container created by such a runtime
// and started by this one is checked against it, and delete removes it.
func (e Evidence) legacyFrozenPath(root, id string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(e.Dir, "frozen", hex.EncodeToString(sum[:8]), id)
}

// ensure makes the evidence directory (0700) and refuses one that is not
// a directory owned by this user, or is writable by anyone else: the
// evidence is only as good as the directory it is in.
func (e Evidence) ensure(sub string) (string, error) {
	dir := filepath.Join(e.Dir, sub)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("evidence directory %s: %w", dir, err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if err := privateDir(d); err != nil {
			return "", fmt.Errorf("evidence directory: %w", err)
		}
		if d == e.Dir || d == filepath.Dir(d) {
			break
		}
	}
	return dir, nil
}

// append adds one line to the host-wide log, opened without following a
// symlink, fsync'd when sync and the evidence asks for it.
func (e Evidence) append(line []byte, sync bool) error {
	if e.Dir == "" {
		return nil
	}
	if _, err := e.ensure(""); err != nil {
		return err
	}
	return appendLine(e.LogPath(), line, sync && e.Fsync)
}

// recordFrozen writes the frozen hash of container id at create. It is
// not fsync'd: the copy is read only within the boot that wrote it (a
// record from another boot is removed without reading its spec, see
// deleteAfterRebootLocked), and a power loss that could leave it missing
// or empty also ends every container it describes — and a missing or
// torn copy reads as a mismatch, so even then it fails closed.
func (e Evidence) recordFrozen(root, id, hash string) error {
	if e.Dir == "" {
		return nil
	}
	if _, err := e.ensure("frozen"); err != nil {
		return err
	}
	return writeFileAtomic(e.frozenPath(root, id), []byte(hash+"\n"), 0o600)
}

// checkFrozen compares hash with the one recorded at create. A missing
// record is a mismatch: the container's evidence was removed.
func (e Evidence) checkFrozen(root, id, hash string) error {
	if e.Dir == "" {
		return nil
	}
	got, err := e.frozenHash(root, id)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Errorf(ErrSpecMismatch, "the frozen hash of %q recorded at create is gone from %s", id, filepath.Join(e.Dir, "frozen"))
		}
		return fmt.Errorf("frozen hash of %q: %w", id, err)
	}
	if got != hash {
		return Errorf(ErrSpecMismatch, "the state of %q names spec %s, the host-wide record of its create %s", id, shortHash(hash), shortHash(got))
	}
	return nil
}

// frozenHash is the hash recordFrozen wrote for container id under root
// (fs.ErrNotExist when there is none, or no evidence directory).
func (e Evidence) frozenHash(root, id string) (string, error) {
	if e.Dir == "" {
		return "", fs.ErrNotExist
	}
	data, err := readNoFollow(e.frozenPath(root, id))
	if errors.Is(err, fs.ErrNotExist) {
		data, err = readNoFollow(e.legacyFrozenPath(root, id))
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// forgetFrozen removes container id's frozen hash once it is deleted, and
// a hash an earlier runtime kept in a directory per root, with that
// directory once it is empty.
func (e Evidence) forgetFrozen(root, id string) {
	if e.Dir == "" {
		return
	}
	if err := os.Remove(e.frozenPath(root, id)); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return
	}
	p := e.legacyFrozenPath(root, id)
	if err := os.Remove(p); err == nil {
		_ = os.Remove(filepath.Dir(p)) // only if empty: ENOTEMPTY otherwise
	}
}

// maxReadNoFollow bounds readNoFollow: a frozen spec is well below it
// (spec.MaxConfigSize plus what the runtime adds), and so is a record.
const maxReadNoFollow = 16 << 20
