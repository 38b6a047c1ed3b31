//go:build linux

package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Whoever can rewrite a created container's config.json can rewrite the
// vetto.json beside it (14.4): a frozen spec and a record that agree with
// each other still do not get past start, which also checks the hash the
// create wrote to the host-wide evidence directory. On ac83dfa the
// rewritten command ran.
func TestFrozenSpecRewrittenWithItsRecord(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(e.tmp, "out")
	if err := os.MkdirAll(out, 0o777); err != nil {
		t.Fatal(err)
	}
	edit := func(s *specs.Spec) { s.Mounts = append(s.Mounts, bind(out, "/out", false)) }
	id := e.id()
	e.mustVetto("create", "-b", e.bundle([]string{"sh", "-c", "echo honest > /out/ran"}, edit), id)
	defer e.vetto("delete", "--force", id)

	// The attacker's spec: the frozen one with another command.
	frozen := filepath.Join(e.root, id, "config.json")
	var sp specs.Spec
	data, err := os.ReadFile(frozen)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sp); err != nil {
		t.Fatal(err)
	}
	sp.Process.Args = []string{"sh", "-c", "echo pwned > /out/ran"}
	evil, err := json.Marshal(&sp)
	if err != nil {
		t.Fatal(err)
	}
	// Its hash, as the runtime computes it (sha256 of the canonical JSON),
	// checked first on the honest spec against the hash create recorded.
	if got, want := canonicalHash(t, data), e.vettoState(id)["specHash"]; got != want {
		t.Fatalf("the test's canonical hash %s is not the runtime's %v: fix canonicalHash", got, want)
	}
	hash := canonicalHash(t, evil)
	// Rewrite both, consistently.
	if err := os.WriteFile(frozen, evil, 0o600); err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(e.root, id, "vetto.json")
	var rec map[string]any
	data, err = os.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	rec["specHash"] = hash
	data, _ = json.Marshal(rec)
	if err := os.WriteFile(recPath, data, 0o600); err != nil {
		t.Fatal(err)
	}

	r := e.vetto("start", id)
	if r.code != 125 || !strings.Contains(r.stderr, "host-wide record of its create") {
		t.Fatalf("start after config.json and vetto.json were rewritten together: %s; want 125 naming the host-wide record", r)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "ran")); len(got) > 0 {
		t.Fatalf("the container ran %q", got)
	}
}

// canonicalHash is sha256 of data in canonical JSON (RFC 8785 for what a
// spec holds: sorted keys, no space, no HTML escaping).
func canonicalHash(t *testing.T, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bytes.TrimRight(b.Bytes(), "\n"))
	return hex.EncodeToString(sum[:])
}

// A refused launch leaves evidence in the host-wide log though its state
// directory is gone (14.4): the refusal, why, and the exit status.
func TestRefusalInHostLog(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	r := e.vetto("run", "--security-level", "strict", "-b", e.bundle([]string{"true"}, nil), id)
	if r.code != 126 && r.code != 125 {
		t.Fatalf("strict run of a starter bundle: %s; want a refusal", r)
	}
	data, err := os.ReadFile(hostAuditLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var ev struct {
			ID, Event, Reason string
			Exit              int
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.ID == id && ev.Event == "refused" {
			if ev.Exit != r.code || !strings.Contains(ev.Reason, "strict") {
				t.Fatalf("refusal event %+v; want exit %d and the reason", ev, r.code)
			}
			return
		}
	}
	t.Fatalf("no refused event for %s in %s", id, hostAuditLog)
}

// Receipts survive containers run by clients that pass no flag (14.4):
// after `ctr run --rm` and `podman run --rm`, the host-wide log has each
// container's verdicts and a clean receipt. On ac83dfa the receipt went to
// the state directory the same delete removed.
func TestClientReceiptsInHostLog(t *testing.T) {
	hasEvents := func(t *testing.T, id string) {
		t.Helper()
		rc := lastReceipt(t, hostAuditLog, id)
		if rc == nil || rc.Remaining != nil || !rc.CgroupRemoved {
			t.Fatalf("receipt of %s in %s: %+v; want a clean one", id, hostAuditLog, rc)
		}
		data, _ := os.ReadFile(hostAuditLog)
		if !strings.Contains(string(data), `"id":"`+id+`","spec":`) || !strings.Contains(string(data), `"event":"verdicts","reason":"poststart"`) {
			t.Fatalf("no poststart verdicts of %s in %s", id, hostAuditLog)
		}
	}
	t.Run("ctr", func(t *testing.T) {
		c := clientStartContainerd(t, "")
		id := c.newID("rm")
		if r := c.ctr(c.run([]string{"--rm"}, id, "sh", "-c", "exit 0")...); r.code != 0 {
			t.Fatalf("ctr run --rm: %s", r)
		}
		c.assertDeleted(id)
		hasEvents(t, id)
	})
	t.Run("podman", func(t *testing.T) {
		p := clientStartPodman(t)
		if r := p.podman("--runtime", binary, "run", "--rm", "--rootfs", p.rootfs, "true"); r.code != 0 {
			t.Fatalf("podman run --rm: %s", r)
		}
		id := p.lastID()
		p.assertGone(id)
		hasEvents(t, id)
	})
}

// report tells a container's story from an audit log in each format, and
// refuses a log with a line that is not an event.
func TestReportFormats(t *testing.T) {
	e := newEnv(t)
	audit := filepath.Join(e.tmp, "audit.jsonl")
	id := e.id()
	e.mustVetto("--audit-log", audit, "run", "-b", e.bundle([]string{"true"}, nil), id)
	refused := e.id()
	e.vetto("--audit-log", audit, "run", "--security-level", "strict", "-b", e.bundle([]string{"true"}, nil), refused)

	text := e.mustVetto("report", audit).stdout
	for _, want := range []string{"container " + id, "container " + refused, "REFUSED", "poststart", "receipt"} {
		if !strings.Contains(text, want) {
			t.Errorf("report (text) lacks %q:\n%s", want, text)
		}
	}
	var doc struct {
		Containers []struct {
			ID, Outcome string
		} `json:"containers"`
	}
	if err := json.Unmarshal([]byte(e.mustVetto("report", "--format", "json", "--id", refused, audit).stdout), &doc); err != nil || len(doc.Containers) != 1 || doc.Containers[0].Outcome != "refused" {
		t.Fatalf("report --format json --id %s: %+v %v", refused, doc, err)
	}
	junit := e.mustVetto("report", "--format", "junit", audit).stdout
	var suites struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(junit), &suites); err != nil || len(suites.Suites) != 2 || suites.Suites[1].Failures != 1 {
		t.Fatalf("report --format junit: %+v %v\n%s", suites, err, junit)
	}
	var sarif struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal([]byte(e.mustVetto("report", "--format", "sarif", audit).stdout), &sarif); err != nil || sarif.Version != "2.1.0" {
		t.Fatalf("report --format sarif: %v", err)
	}
	bad := filepath.Join(e.tmp, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"id\":\"x\",\"event\":\"launch\"}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.vetto("report", bad); r.code != 1 || !strings.Contains(r.stderr, "line 2") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("report of a torn log: %s; want exit 1 and one line naming line 2", r)
	}
}

// An --audit-log the runtime cannot append to is refused in one line
// before anything is built: a missing directory, a fifo (whose open would
// block the runtime until someone reads it), a directory, a symlink and
// another user's file. On 29c9908 the missing directory built the
// container, tore it down and left its record behind ("creating"), and
// the fifo hung the run.
func TestAuditLogRefusedUpFront(t *testing.T) {
	e := newEnv(t)
	fifo := filepath.Join(e.tmp, "audit.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(e.tmp, "victim")
	if err := os.WriteFile(victim, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.tmp, "audit.link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(e.tmp, "theirs.jsonl")
	if err := os.WriteFile(theirs, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"missing directory", filepath.Join(e.tmp, "no", "such", "audit.jsonl"), "no such file or directory"},
		{"fifo", fifo, "not a regular file (a fifo)"},
		{"directory", e.tmp, "not a regular file (a directory)"},
		{"symlink", link, "not a regular file (a symlink)"},
		{"another user's file", theirs, "owned by uid 4242"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := e.id()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "--root", e.root, "--audit-log", tc.path, "run", "-b", e.bundle([]string{"true"}, nil), id)
			r := e.runCmd(cmd)
			if ctx.Err() != nil {
				t.Fatalf("run with --audit-log %s hung (killed after 30 s)", tc.path)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 1 || len(lines) != 1 || !strings.Contains(r.stderr, "--audit-log "+tc.path) || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("run with --audit-log %s: %s; want exit 1 and one line naming it (%q)", tc.path, r, tc.want)
			}
			e.assertNothingLeft(id)
		})
	}
	if data, _ := os.ReadFile(victim); len(data) != 0 {
		t.Errorf("the file behind the symlink was written: %q", data)
	}
}

// A create whose audit log fails part-way (the log's filesystem is full)
// is refused, tears the container down and leaves nothing: on 29c9908 the
// receipt's own audit failure kept the record ("creating", no process) for
// a delete --force that had nothing to do, and the error said itself twice.
func TestAuditLogFullRefusesAndLeavesNothing(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.tmp, "full")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	audit := filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(audit, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Fill it: the log opens, its first append fails with ENOSPC.
	fill, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := fill.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	fill.Close()
	id := e.id()
	r := e.vetto("--audit-log", audit, "run", "-b", e.bundle([]string{"true"}, nil), id)
	if r.code == 0 || !strings.Contains(r.stderr, "no space left on device") {
		t.Fatalf("run with a full audit log: %s; want a refusal naming ENOSPC", r)
	}
	if n := strings.Count(r.stderr, "level=error"); n != 1 || strings.Contains(r.stderr, `\naudit log`) {
		t.Errorf("the error is not one line: %s", r.stderr)
	}
	e.assertNothingLeft(id)
}
