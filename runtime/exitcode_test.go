package runtime

import (
	"errors"
	"fmt"
	"testing"

	"github.com/vetto-dev/vetto-runtime/runtime/launch"
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
		{"drift", ErrDriftDetected, 125},
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

// A refusal by the evaluator exits by the worst kind of rule it broke:
// the floor's 126 over bad input's 1 over the level's 125.
func TestRefusalExitCode(t *testing.T) {
	v := func(k launch.Kind) launch.Violation { return launch.Violation{Rule: "r", Kind: k, Detail: "d"} }
	tests := []struct {
		name string
		vs   launch.Violations
		want int
	}{
		{"level", launch.Violations{v(launch.KindLevel)}, ExitSandbox},
		{"host", launch.Violations{v(launch.KindHost)}, ExitSandbox},
		{"input", launch.Violations{v(launch.KindLevel), v(launch.KindInput)}, ExitFailure},
		{"floor wins", launch.Violations{v(launch.KindInput), v(launch.KindFloor), v(launch.KindLevel)}, ExitFloor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(refusal(LevelStandard, tt.vs)); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
		})
	}
}
