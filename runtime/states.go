package runtime

// State is vetto's lifecycle state of a container (docs/architecture.md). It is
// finer than the OCI status and moves forward only.
type State string

const (
	StateRequested       State = "Requested"
	StateValidated       State = "Validated"
	StateCompiled        State = "Compiled"
	StateConstructed     State = "Constructed"
	StateVerified        State = "Verified"
	StateLaunchable      State = "Launchable"
	StateRunning         State = "Running"
	StateVerifiedRuntime State = "VerifiedRuntime"
	StateTerminating     State = "Terminating"
	StateTerminated      State = "Terminated"
	// StateExited is no state of the machine: `state` shows it for a
	// container whose process has exited while the record still says
	// Running or VerifiedRuntime (nothing writes on an exit), with the
	// record's state as lastState.
	StateExited State = "Exited"
	// StateUnknownAfterReboot is no state of the machine either: `state`
	// shows it for a container created in an earlier boot of the host (its
	// record outlived the reboot on a persistent --root), with the
	// record's state as lastState. Nothing saw it end, so it is neither
	// Terminated nor anything running.
	StateUnknownAfterReboot State = "UnknownAfterReboot"

	// Fatal states end the container; a retry is a new create
	// (docs/architecture.md, the state machine). A policy that fails to
	// compile has no state here: compiling is `spec --policy`, before any
	// container exists (ErrPolicyCompileFailed, exit 125).
	StateBackendUnavailable State = "BackendUnavailable"
	StatePreLaunchFailed    State = "PreLaunchFailed"
	StateSpecMismatch       State = "SpecMismatch"
	StateSpawnFailed        State = "SpawnFailed"
	StatePostLaunchFailed   State = "PostLaunchFailed"
	StateDriftDetected      State = "DriftDetected"
)

// order is the forward sequence; a state may move to any later one only as
// the transition table below allows.
var order = []State{
	StateRequested, StateValidated, StateCompiled, StateConstructed, StateVerified,
	StateLaunchable, StateRunning, StateVerifiedRuntime, StateTerminating, StateTerminated,
}

// transitions lists every legal move. Anything not here is refused.
var transitions = map[State][]State{
	StateRequested: {StateValidated},
	StateValidated: {StateCompiled},
	// BackendUnavailable: the backend, handed the frozen spec, says it
	// has no sandbox to build it in (a macOS host without sandbox-exec,
	// a build without the platform's backend). The evaluator's own
	// refusal for want of the host's support comes before any record.
	StateCompiled:    {StateConstructed, StateSpawnFailed, StateSpecMismatch, StateBackendUnavailable},
	StateConstructed: {StateVerified, StatePreLaunchFailed, StateSpecMismatch, StateTerminating},
	StateVerified:    {StateLaunchable, StateTerminating},
	StateLaunchable:  {StateRunning, StateSpawnFailed, StateSpecMismatch, StatePreLaunchFailed, StateTerminating},
	// Running -> SpawnFailed: the init was let go but could not exec the
	// program after its canaries (the shim's go-ahead failed).
	StateRunning: {StateVerifiedRuntime, StatePostLaunchFailed, StateSpawnFailed, StateTerminating},
	StateVerifiedRuntime: {
		StateDriftDetected, StateTerminating,
	},
	StateTerminating: {StateTerminated},
	// A fatal state that left a container behind (spawned, then failed a
	// check) still has to be torn down.
	StatePreLaunchFailed:  {StateTerminating},
	StatePostLaunchFailed: {StateTerminating},
	StateDriftDetected:    {StateTerminating},
	StateSpecMismatch:     {StateTerminating},
	StateSpawnFailed:      {StateTerminating},
}

// Fatal reports whether s is one of the states that end a container.
func (s State) Fatal() bool {
	switch s {
	case StateBackendUnavailable, StatePreLaunchFailed,
		StateSpecMismatch, StateSpawnFailed, StatePostLaunchFailed, StateDriftDetected:
		return true
	}
	return false
}

// BeforeStart says that a container in state s has not been started:
// its program has not run.
func (s State) BeforeStart() bool {
	switch s {
	case StateRequested, StateValidated, StateCompiled, StateConstructed, StateVerified, StateLaunchable:
		return true
	}
	return false
}

// Known reports whether s is a state this version defines.
func (s State) Known() bool {
	if s.Fatal() {
		return true
	}
	for _, o := range order {
		if o == s {
			return true
		}
	}
	return false
}

// Transition checks the move from → to and returns an error naming both if
// the table does not allow it.
func Transition(from, to State) error {
	for _, allowed := range transitions[from] {
		if allowed == to {
			return nil
		}
	}
	return Errorf(ErrWrongState, "illegal state transition %s -> %s", from, to)
}
