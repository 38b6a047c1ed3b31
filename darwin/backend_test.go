package darwin

import (
	"errors"
	"testing"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// The backend must refuse, never pretend: a create that "succeeded" here
// would be a container with no sandbox at all.
func TestBackendRefuses(t *testing.T) {
	_, _, err := Backend{}.Create(&runtime.CreateRequest{ID: "c1"})
	if !errors.Is(err, runtime.ErrBackendUnavailable) {
		t.Fatalf("Create = %v, want ErrBackendUnavailable", err)
	}
	if got := runtime.ExitCode(err); got != runtime.ExitSandbox {
		t.Fatalf("exit code %d, want %d", got, runtime.ExitSandbox)
	}
	if _, err := (Backend{}).Load("/x", "c1"); !errors.Is(err, runtime.ErrNotExist) {
		t.Fatalf("Load = %v, want ErrNotExist", err)
	}
}
