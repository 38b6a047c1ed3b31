package runtime

import (
	"errors"
	"testing"
)

func allStates() []State {
	out := append([]State{}, order...)
	return append(out, StateBackendUnavailable, StatePreLaunchFailed,
		StateSpecMismatch, StateSpawnFailed, StatePostLaunchFailed, StateDriftDetected)
}

// legal is written out independently of the transitions table so that a
// careless edit of the table fails this test.
var legal = map[[2]State]struct{}{
	{StateRequested, StateValidated}:           {},
	{StateValidated, StateCompiled}:            {},
	{StateCompiled, StateBackendUnavailable}:   {},
	{StateCompiled, StateConstructed}:          {},
	{StateCompiled, StateSpawnFailed}:          {},
	{StateCompiled, StateSpecMismatch}:         {},
	{StateConstructed, StateVerified}:          {},
	{StateConstructed, StatePreLaunchFailed}:   {},
	{StateConstructed, StateSpecMismatch}:      {},
	{StateConstructed, StateTerminating}:       {},
	{StateVerified, StateLaunchable}:           {},
	{StateVerified, StateTerminating}:          {},
	{StateLaunchable, StateRunning}:            {},
	{StateLaunchable, StateSpawnFailed}:        {},
	{StateLaunchable, StateSpecMismatch}:       {},
	{StateLaunchable, StatePreLaunchFailed}:    {},
	{StateLaunchable, StateTerminating}:        {},
	{StateRunning, StateVerifiedRuntime}:       {},
	{StateRunning, StatePostLaunchFailed}:      {},
	{StateRunning, StateSpawnFailed}:           {},
	{StateRunning, StateTerminating}:           {},
	{StateVerifiedRuntime, StateDriftDetected}: {},
	{StateVerifiedRuntime, StateTerminating}:   {},
	{StateTerminating, StateTerminated}:        {},
	{StatePreLaunchFailed, StateTerminating}:   {},
	{StatePostLaunchFailed, StateTerminating}:  {},
	{StateDriftDetected, StateTerminating}:     {},
	{StateSpecMismatch, StateTerminating}:      {},
	{StateSpawnFailed, StateTerminating}:       {},
}

func TestTransitionEveryPair(t *testing.T) {
	for _, from := range allStates() {
		for _, to := range allStates() {
			_, want := legal[[2]State{from, to}]
			err := Transition(from, to)
			if want && err != nil {
				t.Errorf("%s -> %s refused (%v), want allowed", from, to, err)
			}
			if !want && !errors.Is(err, ErrWrongState) {
				t.Errorf("%s -> %s = %v, want refused", from, to, err)
			}
		}
	}
}

func TestStatesKnownAndFatal(t *testing.T) {
	for _, s := range allStates() {
		if !s.Known() {
			t.Errorf("%s not Known", s)
		}
	}
	if State("Bogus").Known() {
		t.Error("unknown state reported Known")
	}
	if StateRunning.Fatal() || !StateSpawnFailed.Fatal() {
		t.Error("Fatal() wrong for Running/SpawnFailed")
	}
	// Terminated is the end: nothing leaves it.
	for _, to := range allStates() {
		if Transition(StateTerminated, to) == nil {
			t.Errorf("Terminated -> %s allowed", to)
		}
	}
}
