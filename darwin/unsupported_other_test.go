//go:build !darwin

package darwin

import (
	"errors"
	"testing"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// Off macOS a spec the translator accepts still runs nowhere: the backend
// says it is unavailable (125), it never pretends.
func TestCreateUnavailableOffDarwin(t *testing.T) {
	_, _, err := testBackend().Create(&runtime.CreateRequest{ID: "c1", Dir: t.TempDir() + "/b", Spec: base()})
	if !errors.Is(err, runtime.ErrBackendUnavailable) || runtime.ExitCode(err) != runtime.ExitSandbox {
		t.Fatalf("Create = %v, want ErrBackendUnavailable (125)", err)
	}
	if _, err := testBackend().Load(t.TempDir(), "c1"); !errors.Is(err, runtime.ErrNotExist) {
		t.Fatalf("Load = %v", err)
	}
	d := testBackend().Doctor()
	for _, l := range d.Levels {
		if l.OK && l.Level != runtime.LevelDegraded {
			t.Fatalf("doctor off macOS claims %s", l.Level)
		}
	}
}
