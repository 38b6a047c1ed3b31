package runtime

import (
	"errors"
	"testing"
)

// The default state root per platform: Linux (and Windows) exactly as
// before; darwin a directory that exists on macOS — root's /var/run by its
// real path, a user's Application Support — never $TMPDIR, which macOS
// cleans, and never a /run that macOS does not have.
func TestDefaultRootFor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name    string
		goos    string
		env     func(string) string
		euid    int
		normal  bool
		want    string
		wantErr bool
	}{
		{"linux root", "linux", env(), 0, false, "/run/vetto-runtime", false},
		{"linux user with xdg", "linux", env("XDG_RUNTIME_DIR", "/run/user/1000"), 1000, true, "/run/user/1000/vetto-runtime", false},
		{"linux user without xdg", "linux", env("HOME", "/home/u"), 1000, true, "/run/vetto-runtime", true},
		{"linux userns root with xdg", "linux", env("XDG_RUNTIME_DIR", "/run/user/1000"), 0, true, "/run/user/1000/vetto-runtime", false},
		{"linux root with xdg", "linux", env("XDG_RUNTIME_DIR", "/run/user/0"), 0, false, "/run/vetto-runtime", false},
		{"windows with xdg", "windows", env("XDG_RUNTIME_DIR", `C:\x`), -1, false, "/run/vetto-runtime", false},
		{"windows without", "windows", env(), -1, false, "/run/vetto-runtime", true},
		{"darwin root", "darwin", env("TMPDIR", "/var/folders/x/T/"), 0, false, "/private/var/run/vetto-runtime", false},
		{"darwin user", "darwin", env("HOME", "/Users/dev", "TMPDIR", "/var/folders/x/T/"), 501, true, "/Users/dev/Library/Application Support/vetto-runtime", false},
		{"darwin user with xdg", "darwin", env("HOME", "/Users/dev", "XDG_RUNTIME_DIR", "/Users/dev/.run"), 501, true, "/Users/dev/.run/vetto-runtime", false},
		{"darwin user without home", "darwin", env("HOME", "relative"), 501, true, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := defaultRootFor(tc.goos, tc.env, tc.euid, tc.normal)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("defaultRootFor = %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v is not ErrInvalidInput (exit 1)", err)
			}
		})
	}
}
