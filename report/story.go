// Package report turns the audit log (one JSON event per line, as the
// runtime writes it to the host-wide log and --audit-log) into each
// container's story — its launch, level and degradations, every round of
// verdicts, its refusal or its teardown receipt — and renders it for a
// person (text) or a CI system (JSON, JUnit XML for test reports, SARIF
// for code scanning). It reads only what it is given.
package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// event is the part of an audit line a story uses.
type event struct {
	Time    time.Time      `json:"time"`
	ID      string         `json:"id"`
	Spec    string         `json:"spec"`
	Level   string         `json:"level"`
	Event   string         `json:"event"`
	From    string         `json:"from"`
	To      string         `json:"to"`
	Reason  string         `json:"reason"`
	Results []hooks.Result `json:"results"`
	Receipt *hooks.Receipt `json:"receipt"`
	Exit    int            `json:"exit"`
	Bundle  string         `json:"bundle"`
}

// Round is one verification: its phase (poststart, verify, monitor) and
// verdicts.
type Round struct {
	Time    time.Time      `json:"time"`
	Phase   string         `json:"phase"`
	Outcome string         `json:"outcome"` // PASS, FAIL, INCONCLUSIVE
	Results []hooks.Result `json:"results"`
}

// Story is one container's life as the audit log tells it. A container
// created twice under one id (after a delete) is two stories.
type Story struct {
	ID     string    `json:"id"`
	Spec   string    `json:"spec,omitempty"`
	Level  string    `json:"level,omitempty"`
	Bundle string    `json:"bundle,omitempty"`
	Start  time.Time `json:"start"`
	// Launch is the launch line: tier, network, level, posture and the
	// degradations it accepted.
	Launch   string   `json:"launch,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Refused is why the launch was refused, with Exit its status.
	Refused string `json:"refused,omitempty"`
	Exit    int    `json:"exit,omitempty"`
	// State is the last state the container reached.
	State   string         `json:"state,omitempty"`
	Rounds  []Round        `json:"rounds,omitempty"`
	Receipt *hooks.Receipt `json:"receipt,omitempty"`
	// Outcome sums it up: refused, failed (a FAIL killed or was recorded),
	// verified, unverified (never verified), running (no end yet), or
	// unknown-after-reboot (its record outlived a reboot; nobody saw the
	// end).
	Outcome string `json:"outcome"`
}

// Parse reads an audit log and returns the stories in the order their
// containers first appear; with id set, only that container's. A line that
// is not an event is an error naming its number: the log is evidence, and
// a torn or foreign line is worth knowing about.
func Parse(r io.Reader, id string) ([]*Story, error) {
	var out []*Story
	open := map[string]*Story{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var ev event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", n, err)
		}
		if ev.ID == "" || ev.Event == "" {
			return nil, fmt.Errorf("audit log line %d: not an audit event (no id or event)", n)
		}
		if id != "" && ev.ID != id {
			continue
		}
		s := open[ev.ID]
		// A new container under a used id begins with Requested (or a
		// refusal of a create that never got a record).
		if s == nil || (ev.Event == "transition" && ev.From == "Requested" && s.State != "" && s.State != "Requested") || s.done() {
			s = &Story{ID: ev.ID, Start: ev.Time}
			open[ev.ID] = s
			out = append(out, s)
		}
		s.add(ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	for _, s := range out {
		s.Outcome = s.outcome()
	}
	return out, nil
}

// done: the story has ended (refused, or torn down for good).
func (s *Story) done() bool {
	return s.Refused != "" || s.State == "Terminated" || s.afterReboot()
}

// afterReboot: the container's record outlived a reboot and was deleted
// unseen; its story ends there, neither terminated nor torn down.
func (s *Story) afterReboot() bool {
	return s.Receipt != nil && s.Receipt.Method == "unknown-after-reboot"
}

func (s *Story) add(ev event) {
	if ev.Spec != "" {
		s.Spec = ev.Spec
	}
	if ev.Level != "" {
		s.Level = ev.Level
	}
	if ev.Bundle != "" {
		s.Bundle = ev.Bundle
	}
	switch ev.Event {
	case "transition":
		s.State = ev.To
	case "launch":
		s.Launch = ev.Reason
	case "warning":
		s.Warnings = append(s.Warnings, ev.Reason)
	case "refused":
		s.Refused, s.Exit = ev.Reason, ev.Exit
	case "verdicts":
		phase := ev.Reason
		if phase == "" {
			phase = "pre-launch"
		}
		s.Rounds = append(s.Rounds, Round{Time: ev.Time, Phase: phase, Outcome: outcome(ev.Results), Results: ev.Results})
	case "receipt":
		s.Receipt = ev.Receipt
	}
}

func outcome(rs []hooks.Result) string {
	return map[hooks.Summary]string{hooks.AllPass: "PASS", hooks.Inconclusive: "INCONCLUSIVE", hooks.AnyFail: "FAIL"}[hooks.Summarize(rs)]
}

func (s *Story) outcome() string {
	if s.Refused != "" {
		return "refused"
	}
	if s.afterReboot() {
		return "unknown-after-reboot"
	}
	verified := false
	for _, r := range s.Rounds {
		if r.Outcome == "FAIL" {
			return "failed"
		}
		if r.Phase == "poststart" && r.Outcome == "PASS" {
			verified = true
		}
	}
	switch {
	case s.State != "Terminated" && s.Receipt == nil:
		return "running"
	case verified:
		return "verified"
	}
	return "unverified"
}
