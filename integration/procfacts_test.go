//go:build linux

package integration

import (
	"strings"
	"testing"
)

// Two things the spec sets directly on the process: its resource limits,
// read back from the host after the exec (P7/rlimit), and its
// environment, which the init checks against the frozen spec's before
// the exec (a program may rewrite its own environment block at once, so
// a read after the exec proves nothing). Each attack is a backend that
// built something else than the frozen spec (the fault-injection build),
// as a bug would: the launch must fail, 125, saying why, the program must
// not have run, and nothing may be left.
func TestProcessFactsReadBack(t *testing.T) {
	cases := []struct {
		name, fault, check string
	}{
		{"rlimits not applied", "no-rlimits", "P7/rlimit/nofile: FAIL"},
		{"a host variable leaked in", "add-env:HOST_TOKEN=s3cret-value", "the process does not run: its environment is not the spec's process.env"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.fault = tc.fault
			id := e.id()
			// The program says it ran, then waits for P7 to look at it.
			r := e.vetto("run", "-b", e.bundle([]string{"sh", "-c", "echo RAN; sleep 5"}, nil), id)
			if r.code != 125 || !strings.Contains(r.stderr, tc.check) {
				t.Fatalf("run with %s: %s; want 125 naming %q", tc.fault, r, tc.check)
			}
			if tc.fault != "no-rlimits" && strings.Contains(r.stdout, "RAN") {
				t.Errorf("the program ran with the leaked variable: stdout %q", r.stdout)
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
