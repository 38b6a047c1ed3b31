package runtime

import (
	"errors"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"plain", errors.New("boom"), 1},
		{"not exist", ErrNotExist, 1},
		{"exists", ErrExist, 1},
		{"invalid id", ErrInvalidID, 1},
		{"invalid input", ErrInvalidInput, 1},
		{"wrong state", ErrWrongState, 1},
		{"not found", ErrNotFound, 1},
		{"hook failed", ErrHookFailed, 1},
		{"backend unavailable", ErrBackendUnavailable, 125},
		{"pre-launch", ErrPreLaunchFailed, 125},
		{"post-launch", ErrPostLaunchFailed, 125},
		{"spec mismatch", ErrSpecMismatch, 125},
		{"degraded refused", ErrDegradedRefused, 125},
		{"teardown", ErrTeardownIncomplete, 125},
		{"spawn", ErrSpawnFailed, 125},
		{"policy", ErrPolicyCompileFailed, 125},
		{"floor", ErrFloorForbids, 126},
		{"wrapped twice", fmt.Errorf("create %q: %w", "c1", Errorf(ErrPreLaunchFailed, "check")), 125},
		{"joined floor", errors.Join(errors.New("x"), ErrFloorForbids), 126},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// Every kind in the table maps to its code even when wrapped and when its
// message is reused by an unrelated error: the mapping never reads text.
func TestExitCodeIgnoresText(t *testing.T) {
	for _, e := range exitCodes {
		lookalike := errors.New(e.kind.Error())
		if got := ExitCode(lookalike); got != ExitFailure {
			t.Errorf("an error that only shares the text of %q mapped to %d, want %d", e.kind, got, ExitFailure)
		}
		if got := ExitCode(fmt.Errorf("op: %w", e.kind)); got != e.code {
			t.Errorf("wrapped %q mapped to %d, want %d", e.kind, got, e.code)
		}
	}
}

func FuzzExitCode(f *testing.F) {
	f.Add(0, "msg")
	f.Fuzz(func(t *testing.T, i int, msg string) {
		if len(exitCodes) == 0 {
			return
		}
		if i < 0 {
			i = -i
		}
		e := exitCodes[i%len(exitCodes)]
		err := fmt.Errorf("%s: %w", msg, e.kind)
		if got := ExitCode(err); got != e.code {
			t.Fatalf("ExitCode(%v) = %d, want %d", err, got, e.code)
		}
	})
}
