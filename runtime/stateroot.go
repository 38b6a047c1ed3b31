package runtime

import (
	"os"
	"path/filepath"
	goruntime "runtime"
)

// DefaultRoot is the state root when --root is not given, and an error
// when there is none for this caller (then --root must be given).
func DefaultRoot() (string, error) {
	return defaultRootFor(goruntime.GOOS, os.Getenv, os.Geteuid(), NormalUser())
}

// defaultRootFor decides the default state root (pure). A normal user
// with $XDG_RUNTIME_DIR keeps it there, as runc does (podman never passes
// --root for a rootless user). Otherwise:
//
//   - Linux (and Windows, unchanged): /run/vetto-runtime, root's tmpfs; a
//     normal user without $XDG_RUNTIME_DIR has no default.
//   - darwin: root gets /private/var/run/vetto-runtime (/var/run named
//     through its real path: /var is a symlink, which CheckStateRoot
//     refuses in a state root's ancestry); a normal user gets
//     ~/Library/Application Support/vetto-runtime — not $TMPDIR, which
//     macOS may clean of entries unused for three days (confstr(3),
//     _CS_DARWIN_USER_TEMP_DIR): a detached container's records would go
//     while it runs.
func defaultRootFor(goos string, getenv func(string) string, euid int, normalUser bool) (string, error) {
	if xdg := getenv("XDG_RUNTIME_DIR"); xdg != "" && normalUser {
		return filepath.Join(xdg, "vetto-runtime"), nil
	}
	if goos == "darwin" {
		if euid == 0 {
			return "/private/var/run/vetto-runtime", nil
		}
		if home := getenv("HOME"); filepath.IsAbs(home) {
			return filepath.Join(home, "Library", "Application Support", "vetto-runtime"), nil
		}
		return "", Errorf(ErrInvalidInput, "not root (uid %d) and $HOME is not an absolute path, so there is no state root of your own: pass --root DIR (a directory of yours)", euid)
	}
	if euid != 0 && getenv("XDG_RUNTIME_DIR") == "" {
		// /run/vetto-runtime is root's: a normal user's records live in
		// their own runtime directory, which a login session provides.
		// (Root of a user namespace without one keeps /run/vetto-runtime,
		// as runc keeps /run/runc.)
		return "/run/vetto-runtime", Errorf(ErrInvalidInput, "not root (uid %d) and $XDG_RUNTIME_DIR is unset, so there is no state root of your own: log in through a session that sets it, or pass --root DIR (a directory of yours, ideally on tmpfs)", euid)
	}
	return "/run/vetto-runtime", nil
}
