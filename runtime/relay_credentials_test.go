//go:build linux

package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vetto-dev/vetto-runtime/spec"
)

const credTestSecret = "tok-5e6f7a8b9c" // must never be in an error

// Each refusal is one line naming the host and the source, of kind
// ErrPreLaunchFailed (125), and never carries the value.
func TestReadCredentials(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", credTestSecret+"\n", 0o600)
	write("group", credTestSecret, 0o640)
	write("world", credTestSecret, 0o604)
	write("empty", "", 0o600)
	write("newline-only", "\n", 0o600)
	write("big", strings.Repeat("x", maxCredentialSize+1), 0o600)
	write("ctl", credTestSecret+"\r\nX-Evil: 1", 0o600)
	if err := os.Symlink(good, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(other, "tok")
	if err := os.WriteFile(outside, []byte(credTestSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	owned := write("owned", credTestSecret, 0o600)
	if os.Geteuid() == 0 {
		if err := os.Chown(owned, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("VETTO_TEST_CRED", credTestSecret)
	t.Setenv("VETTO_TEST_EMPTY", "")
	r := &Runtime{Config: &Config{Relay: RelayConfig{CredentialDirs: []string{dir}}}}

	got, err := r.readCredentials([]spec.CredentialRef{
		{Host: "api.example.test", Header: "Authorization", Prefix: "Bearer ", File: good},
		{Host: "b.example.test", Header: "X-Key", Env: "VETTO_TEST_CRED"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Value != "Bearer "+credTestSecret || got[1].Value != credTestSecret {
		t.Errorf("values read wrong (one trailing newline dropped, prefix put first)")
	}
	if s := got[0].String() + got[0].GoString(); strings.Contains(s, credTestSecret) {
		t.Errorf("String shows the value: %s", s)
	}

	tests := []struct {
		name string
		ref  spec.CredentialRef
		want string
	}{
		{"missing", spec.CredentialRef{File: filepath.Join(dir, "nope")}, "no such file"},
		{"symlink", spec.CredentialRef{File: filepath.Join(dir, "link")}, "is a symlink"},
		{"group-readable", spec.CredentialRef{File: filepath.Join(dir, "group")}, "mode 0640: group or others may read it"},
		{"world-readable", spec.CredentialRef{File: filepath.Join(dir, "world")}, "mode 0604"},
		{"empty", spec.CredentialRef{File: filepath.Join(dir, "empty")}, "empty"},
		{"newline only", spec.CredentialRef{File: filepath.Join(dir, "newline-only")}, "empty"},
		{"too big", spec.CredentialRef{File: filepath.Join(dir, "big")}, "more than 8192"},
		{"line break", spec.CredentialRef{File: filepath.Join(dir, "ctl")}, "control character or a line break"},
		{"directory", spec.CredentialRef{File: filepath.Join(dir, "adir")}, "not a regular file"},
		{"fifo", spec.CredentialRef{File: filepath.Join(dir, "fifo")}, "not a regular file"},
		{"outside the credential dirs", spec.CredentialRef{File: outside}, "not under a credential directory"},
		{"env unset", spec.CredentialRef{Env: "VETTO_TEST_UNSET_XYZ"}, "not set in the runtime's environment"},
		{"env empty", spec.CredentialRef{Env: "VETTO_TEST_EMPTY"}, "empty"},
	}
	if os.Geteuid() == 0 {
		tests = append(tests, struct {
			name string
			ref  spec.CredentialRef
			want string
		}{"another user's", spec.CredentialRef{File: owned}, "owned by uid 65534"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.ref.Host, tc.ref.Header = "api.example.test", "X-Key"
			_, err := r.readCredentials([]spec.CredentialRef{tc.ref})
			if err == nil {
				t.Fatal("read, want a refusal")
			}
			msg := err.Error()
			if !errors.Is(err, ErrPreLaunchFailed) || ExitCode(err) != 125 {
				t.Errorf("error %v: want ErrPreLaunchFailed, exit 125 (got %d)", err, ExitCode(err))
			}
			if !strings.Contains(msg, "credential for api.example.test ("+tc.ref.Source()+")") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q: want the host, the source and %q", msg, tc.want)
			}
			if strings.Contains(msg, credTestSecret) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: carries the value or more than one line", msg)
			}
		})
	}
}
