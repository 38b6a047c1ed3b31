package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

// A log with a verified container that was killed by its monitor, a
// refused one, one created twice under one id, and one still running.
const log = `{"time":"2026-12-01T10:00:00Z","id":"a","spec":"aa","level":"standard","event":"transition","from":"Requested","to":"Validated"}
{"time":"2026-12-01T10:00:00.1Z","id":"a","spec":"aa","level":"standard","event":"launch","reason":"sandbox: linux tier=full","bundle":"/b/a"}
{"time":"2026-12-01T10:00:00.2Z","id":"a","spec":"aa","level":"standard","event":"verdicts","reason":"poststart","results":[{"check":"P1/identity","verdict":"PASS","evidence":"HOST_FACT"},{"check":"P6/masked/proc/keys","verdict":"PASS","evidence":"HOST_FACT"}]}
{"time":"2026-12-01T10:00:05Z","id":"a","spec":"aa","level":"standard","event":"verdicts","reason":"monitor","results":[{"check":"P1/identity","verdict":"PASS","evidence":"HOST_FACT"},{"check":"P6/masked/proc/keys","verdict":"FAIL","evidence":"HOST_FACT","expected":"masked or absent","found":"present and not masked"}]}
{"time":"2026-12-01T10:00:06Z","id":"a","spec":"aa","level":"standard","event":"receipt","reason":"clean","receipt":{"method":"cgroup.kill","killed":1,"remaining":null,"cgroup_removed":true,"pid_namespace_gone":true,"relay_stopped":true,"duration":1,"monitor":{"pid":9,"rounds":3,"kills":1,"stopped":true}}}
{"time":"2026-12-01T10:00:06.1Z","id":"a","spec":"aa","level":"standard","event":"transition","from":"Terminating","to":"Terminated"}
{"time":"2026-12-01T10:01:00Z","id":"r","level":"strict","event":"refused","reason":"level strict refuses this launch","exit":126,"bundle":"/b/r"}
{"time":"2026-12-01T10:02:00Z","id":"a","spec":"bb","level":"standard","event":"transition","from":"Requested","to":"Validated"}
{"time":"2026-12-01T10:02:00.2Z","id":"a","spec":"bb","level":"standard","event":"verdicts","reason":"poststart","results":[{"check":"P1/identity","verdict":"PASS","evidence":"HOST_FACT"}]}
{"time":"2026-12-01T10:02:00.3Z","id":"a","spec":"bb","level":"standard","event":"transition","from":"Running","to":"VerifiedRuntime"}
`

func TestParse(t *testing.T) {
	stories, err := Parse(strings.NewReader(log), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range stories {
		got = append(got, s.ID+"/"+s.Spec+"="+s.Outcome)
	}
	if want := "a/aa=failed r/=refused a/bb=running"; strings.Join(got, " ") != want {
		t.Fatalf("stories %v, want %s", got, want)
	}
	if s := stories[0]; s.Receipt.Monitor.Kills != 1 || len(s.Rounds) != 2 || s.Bundle != "/b/a" || s.Launch == "" {
		t.Fatalf("first story %+v", s)
	}
	only, err := Parse(strings.NewReader(log), "r")
	if err != nil || len(only) != 1 || only[0].Exit != 126 {
		t.Fatalf("--id r: %+v %v", only, err)
	}
	for _, bad := range []string{"not json\n", `{"id":"x"}` + "\n", `{"event":"launch"}` + "\n"} {
		if _, err := Parse(strings.NewReader(bad), ""); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("Parse(%q) = %v, want an error naming line 1", bad, err)
		}
	}
}

func TestRenderers(t *testing.T) {
	stories, err := Parse(strings.NewReader(log), "")
	if err != nil {
		t.Fatal(err)
	}
	for name, render := range Formats {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := render(&b, stories); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			switch name {
			case "text":
				norm := strings.Join(strings.Fields(out), " ")
				for _, want := range []string{"container a FAILED", "monitor FAIL (2 checks): P6/masked/proc/keys: FAIL (present and not masked)", "monitor: 3 rounds, 1 kills", "container r REFUSED", "refused exit 126: level strict"} {
					if !strings.Contains(norm, want) {
						t.Errorf("text lacks %q:\n%s", want, out)
					}
				}
			case "json":
				var doc struct {
					Containers []Story `json:"containers"`
				}
				if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Containers) != 3 {
					t.Fatalf("json: %v\n%s", err, out)
				}
			case "junit":
				var doc junitSuites
				if err := xml.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Suites) != 3 {
					t.Fatalf("junit: %v\n%s", err, out)
				}
				if s := doc.Suites[0]; s.Failures != 1 || s.Tests != 4 {
					t.Fatalf("junit suite a: %d tests, %d failures; want 4 (launch, 2 checks, teardown) and 1\n%s", s.Tests, s.Failures, out)
				}
				if s := doc.Suites[1]; s.Failures != 1 || s.Cases[0].Failure == nil {
					t.Fatalf("junit suite r: want the launch failed\n%s", out)
				}
			case "sarif":
				var doc struct {
					Version string `json:"version"`
					Runs    []struct {
						Results []struct {
							RuleID, Level string
						} `json:"results"`
					} `json:"runs"`
				}
				if err := json.Unmarshal(b.Bytes(), &doc); err != nil || doc.Version != "2.1.0" || len(doc.Runs) != 1 {
					t.Fatalf("sarif: %v\n%s", err, out)
				}
				var got []string
				for _, r := range doc.Runs[0].Results {
					got = append(got, r.RuleID+":"+r.Level)
				}
				if strings.Join(got, " ") != "P6/masked/proc/keys:error launch/refused:error" {
					t.Fatalf("sarif results %v", got)
				}
			}
		})
	}
}

// A container whose record outlived a reboot and was deleted unseen is
// neither verified nor running: its story says unknown-after-reboot, and
// ends there (a create of the same id after it is a new story).
func TestUnknownAfterReboot(t *testing.T) {
	const l = `{"time":"2026-12-01T10:00:00Z","id":"a","event":"transition","from":"Requested","to":"Validated"}
{"time":"2026-12-01T10:00:00.2Z","id":"a","event":"verdicts","reason":"poststart","results":[{"check":"P1/identity","verdict":"PASS","evidence":"HOST_FACT"}]}
{"time":"2026-12-02T08:00:00Z","id":"a","event":"receipt","receipt":{"method":"unknown-after-reboot","killed":0,"remaining":null,"cgroup_removed":true,"pid_namespace_gone":true,"relay_stopped":true,"duration":0}}
{"time":"2026-12-02T08:01:00Z","id":"a","event":"receipt","receipt":{"method":"cgroup.kill","killed":1,"remaining":null,"cgroup_removed":true,"pid_namespace_gone":true,"relay_stopped":true,"duration":1}}
`
	stories, err := Parse(strings.NewReader(l), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(stories) != 2 || stories[0].Outcome != "unknown-after-reboot" {
		t.Fatalf("stories %+v; want the first to end unknown-after-reboot", stories)
	}
}
