package runtime

import (
	"errors"
	"fmt"
	"sort"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// StateView is what `state` prints: the OCI state, runc's extra fields
// (rootfs, created, owner) and vetto's own under "vetto".
type StateView struct {
	OCIVersion  string            `json:"ociVersion"`
	ID          string            `json:"id"`
	Pid         int               `json:"pid"`
	Status      Status            `json:"status"`
	Bundle      string            `json:"bundle"`
	Rootfs      string            `json:"rootfs"`
	Created     time.Time         `json:"created"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Owner       string            `json:"owner"`
	Vetto       VettoView         `json:"vetto"`
}

// VettoView is vetto's part of the state.
type VettoView struct {
	State State `json:"state"`
	// LastState is the record's state when State is Exited or
	// UnknownAfterReboot.
	LastState State    `json:"lastState,omitempty"`
	Backend   string   `json:"backend"`
	Level     Level    `json:"level"`
	SpecHash  string   `json:"specHash,omitempty"`
	Degraded  []string `json:"degraded,omitempty"`
	// Posture is "isolated", or "weakened" with Weakened naming what the
	// spec gives of the host away.
	Posture  string   `json:"posture"`
	Weakened []string `json:"weakened,omitempty"`
	// Notes are recorded facts that are no failure (less privilege than
	// asked).
	Notes      []string `json:"notes,omitempty"`
	LaunchLine string   `json:"launchLine,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	// Landlock is the ruleset the container's processes run under (what
	// the host enforces of dev.vetto.landlock); absent without Landlock.
	Landlock string `json:"landlock,omitempty"`
	// Verification is the last post-launch or verify outcome: PASS,
	// FAIL or INCONCLUSIVE; empty when none ran.
	Verification string `json:"verification,omitempty"`
	// Receipt is the teardown receipt of a container whose teardown left
	// something behind (a clean one goes with the container).
	Receipt *hooks.Receipt `json:"receipt,omitempty"`
}

// State reads container id's state without taking its lock: records are
// replaced atomically, so a reader sees a whole one, and a long operation
// on the container must not block `state`.
func (r *Runtime) State(id string) (*StateView, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	rec, err := r.Store.readRecord(id)
	if err != nil {
		return nil, err
	}
	v := &StateView{
		OCIVersion:  specs.Version,
		ID:          rec.ID,
		Status:      StatusCreating,
		Bundle:      rec.Bundle,
		Rootfs:      rec.Rootfs,
		Created:     rec.Created,
		Annotations: rec.Annotations,
		Owner:       rec.Owner,
		Vetto: VettoView{
			State: rec.State, Backend: rec.Backend, Level: rec.Level, SpecHash: rec.SpecHash,
			Degraded: rec.Degraded, LaunchLine: rec.LaunchLine, Reason: rec.Reason,
			Posture: postureName(rec.Posture), Weakened: rec.Posture, Notes: rec.Notes,
			Landlock:     rec.Landlock,
			Verification: rec.Verification, Receipt: rec.Receipt,
		},
	}
	if r.fromAnotherBoot(rec) {
		// OCI has no status for "unknown": stopped is what an OCI client
		// can act on (delete), and nothing of it runs as this runtime
		// started it. The backend is not asked: its pid is another boot's.
		v.Status = StatusStopped
		v.Vetto.State, v.Vetto.LastState = StateUnknownAfterReboot, rec.State
		v.Vetto.Reason = r.errUnknownAfterReboot(rec).Error()
		return v, nil
	}
	c, err := r.Backend.Load(r.Store.BackendDir(id), id)
	switch {
	case errors.Is(err, ErrNotExist):
		// Record written, backend not there yet (or its create failed).
		if rec.State.Fatal() {
			v.Status = StatusStopped
		}
		return v, nil
	case err != nil:
		return nil, fmt.Errorf("state %q: %w", id, err)
	}
	status, err := c.Status()
	if err != nil {
		return nil, fmt.Errorf("state %q: %w", id, err)
	}
	v.Status = status
	if status != StatusStopped {
		v.Pid = c.InitPid()
	} else if rec.State == StateRunning || rec.State == StateVerifiedRuntime {
		// Verified while it ran; it does not run now.
		v.Vetto.State, v.Vetto.LastState = StateExited, rec.State
	}
	return v, nil
}

// List returns the state of every container under the root, by id. A
// container that vanishes while listing is left out; one whose state
// cannot be read is reported through Warnf and left out.
func (r *Runtime) List() ([]StateView, error) {
	ids, err := r.Store.ids()
	if err != nil {
		return nil, err
	}
	sort.Strings(ids)
	out := []StateView{}
	for _, id := range ids {
		v, err := r.State(id)
		if err != nil {
			// No record, yet a container: one whose record was lost (a
			// create in progress has no backend state before its record).
			// Not listed — nothing of it is known but what the backend
			// says — and not hidden either.
			has := r.backendHas(id)
			switch {
			case !errors.Is(err, ErrNotExist) && has:
				r.Warnf("list: %v; the backend has a container of that id: delete --force %s tears it down", err, id)
			case !errors.Is(err, ErrNotExist):
				r.Warnf("list: %v", err)
			case has:
				r.Warnf("list: %q has no state record, but the backend has a container of that id: delete --force %s tears it down", id, id)
			}
			continue
		}
		out = append(out, *v)
	}
	return out, nil
}

// backendHas says whether the backend has a container id in its
// directory under the state root.
func (r *Runtime) backendHas(id string) bool {
	_, err := r.Backend.Load(r.Store.BackendDir(id), id)
	return err == nil
}

func postureName(weakened []string) string {
	if len(weakened) == 0 {
		return "isolated"
	}
	return "weakened"
}
