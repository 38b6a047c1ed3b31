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
// shim-pause, longer than the 30 s the host waits for the canaries'
// report), as an init wedged before its canaries would. The canaries are
// made at create: create must fail with 125 within that bound, the
// program must never run, and nothing of the container may be left.
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
	began := time.Now()
	r := runCaptured(t, vettoCmdWith(e, fb, "create", "-b", b, id), e.tmp)
	took := time.Since(began)
	defer e.vetto("delete", "--force", id)
	if r.code != 125 || strings.Contains(r.stdout, marker) || !strings.Contains(r.stderr, "canary report") {
		t.Fatalf("create of a container whose canaries never report: %s after %s; want 125 naming the canary report, the program never run", r, took)
	}
	if took > 40*time.Second {
		t.Fatalf("create took %s: the wait for the canaries is not bounded at 30 s", took)
	}
	e.assertNothingLeft(id)
}
