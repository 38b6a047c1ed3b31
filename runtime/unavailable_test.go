package runtime

import (
	"errors"
	"strings"
	"testing"
)

// The backend must refuse, never pretend: a create that "succeeded" here
// would be a container with no sandbox at all.
func TestUnavailableRefuses(t *testing.T) {
	b := Unavailable{OS: "darwin", Sandbox: "Seatbelt"}
	_, _, err := b.Create(&CreateRequest{ID: "c1"})
	if !errors.Is(err, ErrBackendUnavailable) || ExitCode(err) != ExitSandbox || !strings.Contains(err.Error(), "Seatbelt") {
		t.Fatalf("Create = %v (exit %d), want ErrBackendUnavailable, exit 125, naming the sandbox", err, ExitCode(err))
	}
	if _, err := b.Load("/x", "c1"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Load = %v, want ErrNotExist", err)
	}
	if _, err := b.ExampleSpec(false); !errors.Is(err, ErrBackendUnavailable) {
		t.Fatalf("ExampleSpec = %v", err)
	}
	if s, err := b.ParseSignal("9"); err != nil || s != 9 {
		t.Fatalf("ParseSignal(9) = %v, %v", s, err)
	}
}
