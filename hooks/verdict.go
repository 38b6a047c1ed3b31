package hooks

import (
	"fmt"
	"strings"
)

// Verdict is the outcome of one check.
type Verdict string

const (
	Pass        Verdict = "PASS"
	Fail        Verdict = "FAIL"
	Unavailable Verdict = "UNAVAILABLE"
)

// Result is one check's verdict with what was expected and what was found.
// Every Result here is judged from host facts (/proc read by the runtime),
// never from what the container says of itself.
type Result struct {
	Check   string  `json:"check"`
	Verdict Verdict `json:"verdict"`
	// Feature names the degradable feature a failure of this check means
	// (e.g. "limits"); empty when a failure is never acceptable.
	Feature  string `json:"feature,omitempty"`
	Expected string `json:"expected,omitempty"`
	Found    string `json:"found,omitempty"`
}

func (r Result) String() string {
	s := r.Check + ": " + string(r.Verdict)
	if r.Verdict != Pass {
		s += fmt.Sprintf(" (expected %s, found %s)", r.Expected, r.Found)
	}
	return s
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
