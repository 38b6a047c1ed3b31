package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// Formats are the renderers by name.
var Formats = map[string]func(io.Writer, []*Story) error{
	"text":  Text,
	"json":  JSON,
	"junit": JUnit,
	"sarif": SARIF,
}

// Text is the stories for a person: one block per container.
func Text(w io.Writer, stories []*Story) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	// The log is the containers' own words too (a bundle path, a
	// warning naming a planted file): nothing a terminal acts on.
	p := Printable
	for i, s := range stories {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "container %s\t%s\n", p(s.ID), p(strings.ToUpper(s.Outcome)))
		if s.Level != "" {
			fmt.Fprintf(tw, "  level\t%s\n", p(s.Level))
		}
		if s.Spec != "" {
			fmt.Fprintf(tw, "  spec\t%s\n", p(s.Spec))
		}
		if s.Bundle != "" {
			fmt.Fprintf(tw, "  bundle\t%s\n", p(s.Bundle))
		}
		if s.Launch != "" {
			fmt.Fprintf(tw, "  launch\t%s\n", p(s.Launch))
		}
		for _, warn := range s.Warnings {
			fmt.Fprintf(tw, "  warning\t%s\n", p(warn))
		}
		if s.Refused != "" {
			fmt.Fprintf(tw, "  refused\texit %d: %s\n", s.Exit, p(s.Refused))
		}
		for _, r := range s.Rounds {
			line := fmt.Sprintf("%s (%d checks)", r.Outcome, len(r.Results))
			if r.Outcome != "PASS" {
				line += ": " + hooks.Brief(r.Results)
			}
			fmt.Fprintf(tw, "  %s %s\t%s\n", r.Time.Format("15:04:05.000"), p(r.Phase), p(line))
		}
		if rc := s.Receipt; rc != nil {
			line := rc.String()
			if m := rc.Monitor; m != nil {
				line += fmt.Sprintf("; monitor: %d rounds, %d kills", m.Rounds, m.Kills)
			}
			fmt.Fprintf(tw, "  receipt\t%s\n", p(line))
		}
		if s.State != "" {
			fmt.Fprintf(tw, "  last state\t%s\n", p(s.State))
		}
	}
	return tw.Flush()
}

// JSON is the stories as one document: {"containers": [...]}.
func JSON(w io.Writer, stories []*Story) error {
	if stories == nil {
		stories = []*Story{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Containers []*Story `json:"containers"`
	}{stories})
}

// latest is each check's last verdict in a story, with the phase that gave
// it, in the order the checks first appeared.
func latest(s *Story) (order []string, last map[string]Round, res map[string]hooks.Result) {
	last, res = map[string]Round{}, map[string]hooks.Result{}
	for _, r := range s.Rounds {
		for _, v := range r.Results {
			if _, seen := res[v.Check]; !seen {
				order = append(order, v.Check)
			}
			last[v.Check], res[v.Check] = r, v
		}
	}
	return order, last, res
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// JUnit is a test suite per container: a test case per check (its last
// verdict: FAIL a failure, PARTIAL or UNAVAILABLE skipped), one for the
// launch (a refusal fails it) and one for the teardown (an incomplete
// receipt fails it).
func JUnit(w io.Writer, stories []*Story) error {
	var doc junitSuites
	for _, s := range stories {
		suite := junitSuite{Name: "vetto-runtime " + s.ID}
		class := "vetto." + s.ID
		launch := junitCase{Name: "launch", Classname: class}
		if s.Refused != "" {
			launch.Failure = &junitMessage{Message: fmt.Sprintf("refused (exit %d)", s.Exit), Text: s.Refused}
		}
		suite.Cases = append(suite.Cases, launch)
		order, last, res := latest(s)
		for _, check := range order {
			v := res[check]
			c := junitCase{Name: last[check].Phase + " " + check, Classname: class}
			msg := &junitMessage{Message: string(v.Verdict), Text: fmt.Sprintf("expected %s, found %s", v.Expected, v.Found)}
			switch v.Verdict {
			case hooks.Fail:
				c.Failure = msg
			case hooks.Pass:
			default:
				c.Skipped = msg
			}
			suite.Cases = append(suite.Cases, c)
		}
		if rc := s.Receipt; rc != nil {
			c := junitCase{Name: "teardown", Classname: class}
			if !rc.Clean() {
				c.Failure = &junitMessage{Message: "teardown incomplete", Text: rc.String()}
			}
			suite.Cases = append(suite.Cases, c)
		}
		for _, c := range suite.Cases {
			suite.Tests++
			if c.Failure != nil {
				suite.Failures++
			}
			if c.Skipped != nil {
				suite.Skipped++
			}
		}
		doc.Suites = append(doc.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// SARIF is SARIF 2.1.0 for code scanning: a rule per check, a result for
// each check whose last verdict is not PASS (FAIL an error, the rest a
// warning), a refusal and an incomplete teardown as errors; each located at
// the container's config.json.
func SARIF(w io.Writer, stories []*Story) error {
	type msg struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID               string `json:"id"`
		ShortDescription msg    `json:"shortDescription"`
	}
	type location struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
		} `json:"physicalLocation"`
	}
	type result struct {
		RuleID     string            `json:"ruleId"`
		Level      string            `json:"level"`
		Message    msg               `json:"message"`
		Locations  []location        `json:"locations,omitempty"`
		Properties map[string]string `json:"properties"`
	}
	rules := map[string]rule{}
	var results []result
	add := func(s *Story, id, level, text string) {
		if _, ok := rules[id]; !ok {
			rules[id] = rule{ID: id, ShortDescription: msg{describe(id)}}
		}
		r := result{RuleID: id, Level: level, Message: msg{s.ID + ": " + text}, Properties: map[string]string{"container": s.ID, "spec": s.Spec, "level": s.Level}}
		if s.Bundle != "" {
			var l location
			l.PhysicalLocation.ArtifactLocation.URI = "file://" + strings.TrimSuffix(s.Bundle, "/") + "/config.json"
			r.Locations = []location{l}
		}
		results = append(results, r)
	}
	for _, s := range stories {
		if s.Refused != "" {
			add(s, "launch/refused", "error", fmt.Sprintf("refused (exit %d): %s", s.Exit, s.Refused))
		}
		order, last, res := latest(s)
		for _, check := range order {
			v := res[check]
			if v.Verdict == hooks.Pass {
				continue
			}
			level := "warning"
			if v.Verdict == hooks.Fail {
				level = "error"
			}
			add(s, check, level, fmt.Sprintf("%s at %s: expected %s, found %s", v.Verdict, last[check].Phase, v.Expected, v.Found))
		}
		if rc := s.Receipt; rc != nil && !rc.Clean() {
			add(s, "teardown/incomplete", "error", rc.String())
		}
	}
	ids := make([]string, 0, len(rules))
	for id := range rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	list := make([]rule, 0, len(ids))
	for _, id := range ids {
		list = append(list, rules[id])
	}
	if results == nil {
		results = []result{}
	}
	doc := map[string]any{
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": "vetto-runtime", "rules": list}},
			"results": results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// describe names what a check id tests, by its family.
func describe(id string) string {
	families := []struct{ prefix, what string }{
		{"P1/", "the running init is the process verified at create"},
		{"P2/", "the init's namespaces and cgroups are the ones verified at create"},
		{"P3/", "a canary: the boundary holds when the process tries to cross it"},
		{"P4/", "every process of the container is contained and restricted as the spec says"},
		{"P6/", "masked paths stay masked"},
		{"P7/", "limits read back from the cgroup are the ones set"},
		{"landlock/", "the Landlock restriction is in place"},
		{"launch/", "the launch was refused"},
		{"teardown/", "the teardown left something behind"},
	}
	for _, f := range families {
		if strings.HasPrefix(id, f.prefix) {
			return f.what
		}
	}
	return "pre-launch verification: the container is built as the frozen spec says"
}
