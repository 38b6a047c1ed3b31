//go:build linux

package integration

import (
	"strings"
	"testing"
)

// The two facts the spec sets directly on the process, read back from the
// host after the exec: its resource limits (P7/rlimit) and its
// environment (P3/environment). Each attack is a backend that built
// something else than the frozen spec (the fault-injection build), as a
// bug would: the start must fail, 125, naming the check, and nothing may
// be left.
func TestProcessFactsReadBack(t *testing.T) {
	cases := []struct {
		name, fault, check string
	}{
		{"rlimits not applied", "no-rlimits", "P7/rlimit/nofile: FAIL"},
		{"a host variable leaked in", "add-env:HOST_TOKEN=s3cret-value", "P3/environment: FAIL (variables the spec does not set: HOST_TOKEN)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.fault = tc.fault
			id := e.id()
			r := e.vetto("run", "-d", "-b", e.bundle([]string{"sleep", "30"}, nil), id)
			if r.code != 125 || !strings.Contains(r.stderr, tc.check) {
				t.Fatalf("run with %s: %s; want 125 naming %q", tc.fault, r, tc.check)
			}
			if strings.Contains(r.stderr, "s3cret-value") {
				t.Errorf("the verdict repeats the variable's value: %q", r.stderr)
			}
			e.fault = ""
			if out := e.vetto("list", "-q"); strings.TrimSpace(out.stdout) != "" {
				// run tears down what failed; the leak check would say
				// so too, this says which.
				t.Errorf("left after the refusal: %q", out.stdout)
			}
		})
	}
	// The control: the same bundle from the real build passes both.
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "30"}, nil), id)
	v, r := e.verify(id)
	if r.code != 0 || len(v.failing()) != 0 {
		t.Fatalf("verify of an unchanged container: %s", r)
	}
	if !strings.Contains(r.stdout, "P7/rlimit/nofile") {
		t.Errorf("verify does not read the rlimits back: %s", r.stdout)
	}
	e.mustVetto("delete", "--force", id)
}
