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
// lives: one directory per state root (containers of two roots may share
// an id).
func (e Evidence) frozenPath(root, id string) string {
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
	p := e.frozenPath(root, id)
	for attempt := 0; ; attempt++ {
		if _, err := e.ensure(filepath.Join("frozen", filepath.Base(filepath.Dir(p)))); err != nil {
			return err
		}
		err := writeFileAtomic(p, []byte(hash+"\n"), 0o600)
		// A delete of the root's last other container removes the
		// directory between the two (forgetFrozen): make it again.
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 2 {
			return err
		}
	}
}

// checkFrozen compares hash with the one recorded at create. A missing
// record is a mismatch: the container's evidence was removed.
func (e Evidence) checkFrozen(root, id, hash string) error {
	if e.Dir == "" {
		return nil
	}
	data, err := readNoFollow(e.frozenPath(root, id))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Errorf(ErrSpecMismatch, "the frozen hash of %q recorded at create is gone from %s", id, filepath.Join(e.Dir, "frozen"))
		}
		return fmt.Errorf("frozen hash of %q: %w", id, err)
	}
	if got := strings.TrimSpace(string(data)); got != hash {
		return Errorf(ErrSpecMismatch, "the state of %q names spec %s, the host-wide record of its create %s", id, shortHash(hash), shortHash(got))
	}
	return nil
}

// forgetFrozen removes container id's frozen hash once it is deleted, and
// the state root's directory of hashes with its last one: one is made per
// --root, and a host whose callers use many roots (a test harness, a CI
// job each) would otherwise keep an empty directory for each for ever.
func (e Evidence) forgetFrozen(root, id string) {
	if e.Dir != "" {
		p := e.frozenPath(root, id)
		_ = os.Remove(p)
		_ = os.Remove(filepath.Dir(p)) // only if empty: ENOTEMPTY otherwise
	}
}

// maxReadNoFollow bounds readNoFollow: a frozen spec is well below it
// (spec.MaxConfigSize plus what the runtime adds), and so is a record.
const maxReadNoFollow = 16 << 20
