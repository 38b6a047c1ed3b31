package hooks

import (
	"fmt"
	"strings"
)

// Verdict is the outcome of one check.
type Verdict string

const (
	Pass Verdict = "PASS"
	Fail Verdict = "FAIL"
	// Partial: the check ran but its evidence cannot carry a PASS (only
	// the container's word, or a positive control that did not hold).
	Partial     Verdict = "PARTIAL"
	Unavailable Verdict = "UNAVAILABLE"
)

// Evidence says where a verdict's facts come from (docs/verification.md). Only
// HostFact can carry a PASS: a sandboxed process can lie about itself.
type Evidence string

const (
	// HostFact: read by the runtime from the host (procfs, cgroupfs, its
	// own listener), outside the container's control.
	HostFact Evidence = "HOST_FACT"
	// ContainerReport: what a process inside the container said.
	ContainerReport Evidence = "CONTAINER_REPORT"
)

// Result is one check's verdict with what was expected and what was found.
// Every Result here is judged from host facts (/proc read by the runtime),
// never from what the container says of itself, unless Evidence says so.
type Result struct {
	Check   string  `json:"check"`
	Verdict Verdict `json:"verdict"`
	// Evidence is empty for the pre-launch checks, which all read host
	// facts; post-launch checks name it.
	Evidence Evidence `json:"evidence,omitempty"`
	// Feature names the degradable feature a failure of this check means
	// (e.g. "limits"); empty when a failure is never acceptable.
	Feature  string `json:"feature,omitempty"`
	Expected string `json:"expected,omitempty"`
	Found    string `json:"found,omitempty"`
	// Note records a fact that is no failure: less privilege than asked
	// (an ambient capability the kernel cannot raise, a capability the
	// host lacks). The check passes; the launch line and state say it.
	Note string `json:"note,omitempty"`
}

func (r Result) String() string {
	s := r.Check + ": " + string(r.Verdict)
	if r.Verdict != Pass {
		s += fmt.Sprintf(" (expected %s, found %s)", r.Expected, r.Found)
	}
	return s
}

// capped enforces the evidence rule: a PASS that is not backed by a host
// fact is only PARTIAL.
func capped(r Result) Result {
	if r.Verdict == Pass && r.Evidence != HostFact {
		r.Verdict = Partial
	}
	return r
}

// Failed returns the results that are not PASS, joined for an error message.
func Failed(results []Result) string {
	var bad []string
	for _, r := range results {
		if r.Verdict != Pass {
			bad = append(bad, r.String())
		}
	}
	return strings.Join(bad, "; ")
}

// briefChecks and briefFound bound what Brief says.
const (
	briefChecks = 3
	briefFound  = 160
)

// Brief is Failed for one line of a terminal: at most three checks, each
// found value cut short and on one line, and how many more there are. The
// record, the audit log and `verify` keep every verdict in full.
func Brief(results []Result) string {
	var bad []string
	n := 0
	for _, r := range results {
		if r.Verdict == Pass {
			continue
		}
		n++
		if len(bad) == briefChecks {
			continue
		}
		found := strings.Join(strings.Fields(r.Found), " ")
		if len(found) > briefFound {
			found = found[:briefFound-3] + "..."
		}
		bad = append(bad, fmt.Sprintf("%s: %s (%s)", r.Check, r.Verdict, found))
	}
	if n > briefChecks {
		bad = append(bad, fmt.Sprintf("and %d more", n-briefChecks))
	}
	return strings.Join(bad, "; ")
}

// Summary is the overall outcome of a set of post-launch results.
type Summary int

const (
	// AllPass: every check passed on host evidence.
	AllPass Summary = iota
	// Inconclusive: nothing failed, but something is PARTIAL or
	// UNAVAILABLE; the container has not earned VerifiedRuntime.
	Inconclusive
	// AnyFail: at least one check found a broken boundary.
	AnyFail
)

// Summarize folds results into one outcome. An empty set is
// Inconclusive: no check ran, so nothing was proven.
func Summarize(results []Result) Summary {
	if len(results) == 0 {
		return Inconclusive
	}
	s := AllPass
	for _, r := range results {
		switch r.Verdict {
		case Fail:
			return AnyFail
		case Pass:
		default:
			s = Inconclusive
		}
	}
	return s
}

// Only returns the results whose verdict is v.
func Only(results []Result, v Verdict) []Result {
	var out []Result
	for _, r := range results {
		if r.Verdict == v {
			out = append(out, r)
		}
	}
	return out
}
