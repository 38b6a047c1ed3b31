package runtime

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// notifyBackend is the fake backend that can bind a directory in.
type notifyBackend struct{ *fakeBackend }

func (notifyBackend) RelaysNotify() bool { return true }

func TestNotifyDir(t *testing.T) {
	withProcess := &specs.Spec{Process: &specs.Process{Args: []string{"sh"}}}
	for _, tc := range []struct {
		name    string
		environ []string
		relays  bool
		spec    *specs.Spec
		want    string // "" none, "dir" the container's socket directory
		invalid bool
	}{
		{"unset", nil, true, withProcess, "", false},
		{"empty", []string{"NOTIFY_SOCKET="}, true, withProcess, "", false},
		{"set", []string{"NOTIFY_SOCKET=/run/systemd/notify"}, true, withProcess, "dir", false},
		{"abstract", []string{"NOTIFY_SOCKET=@/org/freedesktop/systemd1/notify"}, true, withProcess, "dir", false},
		{"the last assignment wins", []string{"NOTIFY_SOCKET=relative", "NOTIFY_SOCKET=/run/n"}, true, withProcess, "dir", false},
		{"no process to notify", []string{"NOTIFY_SOCKET=/run/n"}, true, &specs.Spec{}, "", false},
		{"a backend that cannot bind it in", []string{"NOTIFY_SOCKET=/run/n"}, false, withProcess, "", false},
		{"relative", []string{"NOTIFY_SOCKET=run/n"}, true, withProcess, "", true},
		{"too long", []string{"NOTIFY_SOCKET=/" + strings.Repeat("n", 200)}, true, withProcess, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
			var b Backend = fb
			if tc.relays {
				b = notifyBackend{fb}
			}
			r, err := New(filepath.Join(t.TempDir(), "root"), b, fakeNamespaces{}, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			r.Environ = tc.environ
			got, err := r.notifyDir("c1", tc.spec)
			if tc.invalid != errors.Is(err, ErrInvalidInput) {
				t.Fatalf("notifyDir: %v, want invalid input %v", err, tc.invalid)
			}
			want := ""
			if tc.want == "dir" {
				want = filepath.Join(r.Store.dir("c1"), notifyDirName)
			}
			if got != want {
				t.Errorf("notifyDir = %q, want %q", got, want)
			}
		})
	}
}

// The container's NOTIFY_SOCKET is the runtime's, whatever the bundle set,
// and its socket directory is read-only with nothing to execute or open as
// a device.
func TestAddNotifySocket(t *testing.T) {
	s := &specs.Spec{Process: &specs.Process{Env: []string{"PATH=/bin", "NOTIFY_SOCKET=/host/systemd/notify", "A=1"}}}
	addNotifySocket(s, "/state/c1/notify")
	wantEnv := []string{"PATH=/bin", "A=1", "NOTIFY_SOCKET=/run/notify/notify.sock"}
	if !slices.Equal(s.Process.Env, wantEnv) {
		t.Errorf("env %q, want %q", s.Process.Env, wantEnv)
	}
	if len(s.Mounts) != 1 {
		t.Fatalf("mounts %+v", s.Mounts)
	}
	m := s.Mounts[0]
	if m.Destination != "/run/notify" || m.Source != "/state/c1/notify" || m.Type != "bind" {
		t.Errorf("mount %+v", m)
	}
	for _, o := range []string{"ro", "nosuid", "noexec", "nodev"} {
		if !slices.Contains(m.Options, o) {
			t.Errorf("mount options %q lack %s", m.Options, o)
		}
	}
}
