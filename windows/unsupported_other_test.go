//go:build !windows

package windows

import (
	"errors"
	"testing"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// Off Windows a spec the translator accepts still runs nowhere: the
// backend says it is unavailable (125), it never pretends.
func TestCreateUnavailableOffWindows(t *testing.T) {
	_, _, err := testBackend().Create(&runtime.CreateRequest{ID: "c1", Dir: t.TempDir() + "/b", Spec: base()})
	if !errors.Is(err, runtime.ErrBackendUnavailable) || runtime.ExitCode(err) != runtime.ExitSandbox {
		t.Fatalf("Create = %v, want ErrBackendUnavailable (125)", err)
	}
	if _, err := testBackend().Load(t.TempDir(), "c1"); !errors.Is(err, runtime.ErrNotExist) {
		t.Fatalf("Load = %v", err)
	}
	for _, l := range testBackend().Doctor().Levels {
		if l.OK && l.Level != runtime.LevelDegraded {
			t.Fatalf("doctor off Windows claims %s", l.Level)
		}
	}
}
