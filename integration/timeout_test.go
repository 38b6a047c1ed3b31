//go:build linux

package integration

import (
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// A verification that does not conclude in time is a FAIL, not a retry
// and not a pass: here the init's pre-exec step stalls (the fault build's
// shim-pause, longer than the 30 s start waits for the canaries' report),
// as an init wedged before its canaries would. start must fail with 125,
// the program must never run, and the container must not claim any
// verification; delete then removes it.
func TestVerificationTimeoutIsAFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 30 s canary exchange")
	}
	e := newEnv(t)
	fb := buildFaultBinary(t)
	id := e.id()
	marker := "ran-" + id
	b := e.bundle([]string{"sh", "-c", "echo " + marker}, func(s *specs.Spec) {
		s.Process.Env = append(s.Process.Env, "TESTONLY_VETTO_FAULT=shim-pause:45s")
	})
	if r := runCaptured(t, vettoCmdWith(e, fb, "create", "-b", b, id), e.tmp); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	began := time.Now()
	r := runCaptured(t, vettoCmdWith(e, fb, "start", id), e.tmp)
	took := time.Since(began)
	if r.code != 125 || strings.Contains(r.stdout, marker) {
		t.Fatalf("start of a container whose canaries never report: %s after %s; want 125, the program never run", r, took)
	}
	if took > 40*time.Second {
		t.Fatalf("start took %s: the wait for the canaries is not bounded at 30 s", took)
	}
	if st := e.vettoState(id); st["state"] == "Running" || st["state"] == "VerifiedRuntime" || st["verification"] == "PASS" {
		t.Fatalf("after a verification that timed out: %v", st)
	}
	e.mustVetto("delete", "--force", id)
}
