package hostpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// This file writes what the compiler decided into the host's file
// system: the bundle of a compiled policy (`spec --policy`, `spec
// --profile`), whose config.json and copies the sandbox must find as the
// plan says, and nothing left behind when that fails.

// ErrUnreachable marks a bundle the sandbox could not set up: its uid
// cannot reach the rootfs. Callers report it as the sandbox not
// established (the CLI: exit 125), not as a typo.
var ErrUnreachable = errors.New("the sandbox cannot reach its bundle")

// inputf is bad input (ErrInput): a clash with what the bundle holds.
func inputf(format string, args ...any) error {
	return &kindError{kinds: []error{ErrInput}, msg: fmt.Sprintf(format, args...)}
}

// unreachablef is ErrUnreachable.
func unreachablef(format string, args ...any) error {
	return &kindError{kinds: []error{ErrUnreachable}, msg: fmt.Sprintf(format, args...)}
}

// WriteBundle writes plan into the bundle directory (absolute, an
// existing directory): for a host-root bundle the empty rootfs and its
// mount points, then the plan's files and config.json, each created
// exclusively. On an error it removes what it wrote.
func WriteBundle(bundle string, plan *spec.Plan) (retErr error) {
	config := filepath.Join(bundle, spec.ConfigFile)
	if plan.Rootfs == "" {
		// The host-root bundle's root is an empty directory: every
		// path the sandbox sees is a mount made inside it.
		rootfs := filepath.Join(bundle, plan.Spec.Root.Path)
		created, err := makeEmptyDir(rootfs)
		if err != nil {
			return err
		}
		if created {
			defer func() {
				if retErr != nil {
					os.Remove(rootfs)
				}
			}()
		}
		// The sandbox sets up its rootfs from inside its user namespace,
		// as its own uid: it must be able to enter the rootfs, and finds
		// its mount points made (it must not own where they are made).
		reachErr := Reachable(rootfs, plan.UID, plan.GID)
		if reachErr != nil {
			// A bundle directory of the caller's own that only lacks
			// search for others (mktemp -d makes 0700) gets it: search
			// lets the sandbox walk to rootfs/ by name, not list or read
			// anything (config.json is 0600).
			if fi, serr := os.Stat(bundle); serr == nil && fi.Mode().Perm()&0o001 == 0 {
				if cerr := os.Chmod(bundle, fi.Mode().Perm()|0o001); cerr == nil {
					reachErr = Reachable(rootfs, plan.UID, plan.GID)
				}
			}
		}
		if reachErr != nil {
			return unreachablef("bundle %s: the sandbox runs as host uid %d, which cannot reach its rootfs: %v; choose a --bundle it can reach (e.g. under /var/tmp), or chmod o+x that directory", bundle, plan.UID, reachErr)
		}
		if err := MakeMountpoints(rootfs, plan.Spec); err != nil {
			return err
		}
	}
	if err := MakeHostEntries(plan.Make); err != nil {
		return err
	}
	var written []string
	defer func() {
		if retErr != nil {
			for i := len(written) - 1; i >= 0; i-- {
				os.Remove(written[i])
			}
		}
	}()
	for _, f := range plan.Files {
		// Copies the sandbox sees instead of a host file (a git config
		// without its credentials): read-only, beside config.json.
		path := filepath.Join(bundle, f.Path)
		for dir := filepath.Dir(path); dir != bundle; dir = filepath.Dir(dir) {
			if _, err := os.Lstat(dir); err != nil {
				if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("write %s: %w", path, err)
				}
				written = append(written, dir)
			}
		}
		if err := writeNew(path, []byte(f.Content), 0o444); err != nil {
			return err
		}
		written = append(written, path)
	}
	data, err := json.MarshalIndent(plan.Spec, "", "\t")
	if err != nil {
		return fmt.Errorf("encode %s: %w", config, err)
	}
	// O_EXCL: never clobber a bundle's config, not even in a race.
	// 0600: the compiled environment is in it.
	f, err := os.OpenFile(config, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return inputf("file %s exists. Remove it first", config)
		}
		return fmt.Errorf("write %s: %w", config, err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		os.Remove(config)
		return fmt.Errorf("write %s: %w", config, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(config)
		return fmt.Errorf("write %s: %w", config, err)
	}
	return nil
}

// WritableRootOf returns the source of a read-write bind in the plan's spec
// that contains path, "" when none does.
func WritableRootOf(plan *spec.Plan, path string) string {
	real := LookupPath(path).Real
	for _, m := range plan.Spec.Mounts {
		if m.Type != "bind" || !slices.Contains(m.Options, "rw") || !filepath.IsAbs(m.Source) {
			continue
		}
		if Within(real, m.Source) {
			return m.Source
		}
	}
	return ""
}

// writeNew writes a file that must not exist yet (O_EXCL).
func writeNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// makeEmptyDir creates dir, or accepts it if it exists and is empty: a
// host-root bundle must not pick up whatever a previous rootfs held.
func makeEmptyDir(dir string) (created bool, err error) {
	err = os.Mkdir(dir, 0o755)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("create %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("%s: %w", dir, err)
	}
	if len(entries) > 0 {
		return false, inputf("%s exists and is not empty: a host-root bundle needs an empty rootfs (or pass --rootfs %s to use it as the root filesystem)", dir, dir)
	}
	return false, nil
}

// MakeHostEntries makes each entry a bundle's read-only binds show that
// does not exist yet (spec.Plan.Make: repository metadata a git directory
// lacks), empty, as git init makes it — a directory 0755, a file 0644 —
// and owned as the directory it is made in, so that the user's git goes
// on writing there. It works inside that directory (os.Root), and only
// if the directory it opened is the one it looked at: a symlink put in the
// git directory's place since is refused, not followed. One that exists
// already is left as it is.
func MakeHostEntries(entries []spec.HostEntry) error {
	for _, e := range entries {
		if err := makeHostEntry(e); err != nil {
			return unreachablef("make %s: %v; the sandbox could plant it, and git on the host runs code from it", e.Path, err)
		}
	}
	return nil
}

func makeHostEntry(e spec.HostEntry) error {
	dir, name := filepath.Dir(e.Path), filepath.Base(e.Path)
	// The directory itself, not a symlink in its place: the one opened
	// is the one looked at.
	want, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !want.IsDir() {
		return fmt.Errorf("%s is not a directory (%v)", dir, want.Mode().Type())
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	parent, err := root.Stat(".")
	if err != nil {
		return err
	}
	if !os.SameFile(want, parent) {
		return fmt.Errorf("%s changed while it was opened", dir)
	}
	if e.Dir {
		err = root.Mkdir(name, 0o755)
	} else {
		var f *os.File
		if f, err = root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			err = f.Close()
		}
	}
	if errors.Is(err, fs.ErrExist) {
		fi, serr := root.Lstat(name)
		if serr != nil {
			return serr
		}
		if fi.IsDir() != e.Dir {
			return fmt.Errorf("it exists, as %v", fi.Mode().Type())
		}
		return nil
	}
	if err != nil {
		return err
	}
	if uid, gid, ok := ownerOf(parent); ok && os.Geteuid() == 0 {
		return root.Lchown(name, int(uid), int(gid))
	}
	return nil
}
