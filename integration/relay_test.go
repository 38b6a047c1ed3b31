//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The egress relay (issue 15), judged from the host: where its sockets
// are, who holds them, what the relay process is, that it dies with the
// container and that teardown says so.

// relayPolicy is a network-allowlist policy naming rules.
func relayPolicy(rules ...string) string {
	q := make([]string, len(rules))
	for i, r := range rules {
		q[i] = strconv.Quote(r)
	}
	return "[network]\nmode = \"allowlist\"\nallow = [" + strings.Join(q, ", ") + "]\n"
}

// relayOf reads the relay process the container's state records.
func relayOf(t *testing.T, e *env, id string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, id, "relay.json"))
	if err != nil {
		t.Fatalf("relay record: %v", err)
	}
	var p struct{ Pid int }
	if err := json.Unmarshal(data, &p); err != nil || p.Pid <= 0 {
		t.Fatalf("relay record %q: %v", data, err)
	}
	return p.Pid
}

// socketInodes lists the socket inodes pid holds.
func socketInodes(t *testing.T, pid int) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	fds, err := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			out[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	return out
}

// listeners parses /proc/<pid>/net/{tcp,udp}: the sockets of pid's network
// namespace, "127.0.0.1:3128" → inode, TCP only those listening.
func listeners(t *testing.T, pid int, proto string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, proto))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || proto == "tcp" && f[3] != "0A" {
			continue
		}
		hexAddr, hexPort, _ := strings.Cut(f[1], ":")
		a, _ := strconv.ParseUint(hexAddr, 16, 32)
		port, _ := strconv.ParseUint(hexPort, 16, 16)
		out[fmt.Sprintf("%d.%d.%d.%d:%d", a&0xff, a>>8&0xff, a>>16&0xff, a>>24, port)] = f[9]
	}
	return out
}

// The relay's sockets are in the container's network namespace and held
// by the relay process, not in the host's; the relay is nobody with no
// capability under a seccomp filter, outside the container's cgroup; the
// pre-launch verdicts audit every one of its checks; teardown proves it
// gone and records what it counted.
func TestRelayLifecycle(t *testing.T) {
	e := relayEnv(t)
	u := newUpstream(t)
	cfg := u.runtimeConfig(e.tmp)
	p := policyProject(e)
	bundle, _ := e.compilePolicy(relayPolicy("up.vetto.test"), p,
		`curl -sS -m 10 -o /dev/null -w "allowed %{http_code}\n" http://up.vetto.test/; curl -sS -m 10 -o /dev/null -w "denied %{http_code}\n" http://evil.example/`)
	audit := filepath.Join(e.tmp, "audit.jsonl")
	id := e.id()
	r := e.vetto("--config", cfg, "--audit-log", audit, "create", "-b", bundle, id)
	if r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	relayPid := relayOf(t, e, id)
	initPid := e.initPid(id)

	held := socketInodes(t, relayPid)
	tcp, udp := listeners(t, initPid, "tcp"), listeners(t, initPid, "udp")
	for _, want := range []struct {
		proto, addr string
		in          map[string]string
	}{{"tcp", "127.0.0.1:3128", tcp}, {"tcp", "127.0.0.1:53", tcp}, {"tcp", "0.0.0.0:80", tcp}, {"tcp", "0.0.0.0:443", tcp}, {"udp", "127.0.0.1:53", udp}} {
		inode, ok := want.in[want.addr]
		if !ok {
			t.Errorf("no %s listener on %s in the container's network namespace: %v", want.proto, want.addr, want.in)
			continue
		}
		if !held[inode] {
			t.Errorf("the %s listener on %s (inode %s) is not the relay's: relay holds %v", want.proto, want.addr, inode, held)
		}
	}
	hostTCP := listeners(t, os.Getpid(), "tcp")
	for addr, inode := range hostTCP {
		if held[inode] {
			t.Errorf("the relay listens on %s in the host's network namespace", addr)
		}
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", relayPid))
	for _, want := range []string{"Uid:\t65534\t65534\t65534\t65534", "Gid:\t65534\t65534\t65534\t65534", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(string(status), want) {
			t.Errorf("relay status lacks %q:\n%s", want, status)
		}
	}
	if cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", relayPid)); strings.Contains(string(cg), id) {
		t.Errorf("the relay is in the container's cgroup (the workload's limits and kill would be its):\n%s", cg)
	}
	verdicts := auditOf(t, audit, id, "verdicts")
	if len(verdicts) == 0 {
		t.Fatal("no verdicts audited")
	}
	var results []struct{ Check, Verdict, Evidence string }
	json.Unmarshal(verdicts[0].Results, &results)
	seen := map[string]string{}
	for _, res := range results {
		if strings.HasPrefix(res.Check, "relay/") {
			seen[res.Check] = res.Verdict + " " + res.Evidence
		}
	}
	for _, check := range []string{"relay/socket/proxy", "relay/socket/dns-udp", "relay/socket/dns-tcp", "relay/socket/transparent-80", "relay/socket/transparent-443", "relay/process"} {
		if seen[check] != "PASS HOST_FACT" {
			t.Errorf("pre-launch verdict %s = %q, want PASS HOST_FACT (all: %v)", check, seen[check], seen)
		}
	}

	if r := e.vetto("--audit-log", audit, "start", id); r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	e.waitStatus(id, "stopped")
	r = e.vetto("--audit-log", audit, "delete", id)
	if r.code != 0 {
		t.Fatalf("delete: %s", r)
	}
	var receipt struct {
		RelayStopped bool `json:"relay_stopped"`
		Relay        *struct {
			Allowed, Denied int
			BytesDown       int `json:"bytes_down"`
			DNSAnswered     int `json:"dns_answered"`
			DNSRefused      int `json:"dns_refused"`
		} `json:"relay"`
	}
	receipts := auditOf(t, audit, id, "receipt")
	if len(receipts) == 0 {
		t.Fatal("no receipt audited")
	}
	json.Unmarshal(receipts[len(receipts)-1].Receipt, &receipt)
	if !receipt.RelayStopped || receipt.Relay == nil || receipt.Relay.Allowed != 1 || receipt.Relay.Denied != 1 || receipt.Relay.BytesDown == 0 {
		t.Errorf("receipt %s: want relay_stopped and the relay's counters (1 allowed, 1 denied, bytes down)", receipts[len(receipts)-1].Receipt)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", relayPid)); err == nil {
		if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", relayPid)); !strings.Contains(string(st), ") Z ") {
			t.Errorf("relay %d still alive after the receipt said it stopped", relayPid)
		}
	}
	events := relayEvents(t, audit, id)
	var http []relayEvent
	for _, ev := range events {
		if ev.Protocol == "http" {
			http = append(http, ev)
		}
	}
	if len(http) != 2 || http[0].Host != "up.vetto.test" || http[0].Verdict != "allow" || http[1].Host != "evil.example" || http[1].Rule != "no-rule" ||
		!strings.Contains(http[1].Reason, `add "evil.example" to network.allow`) || http[0].Spec == "" {
		t.Errorf("relay audit: want one allowed request to up.vetto.test and one denied to evil.example with the rule to add; got %+v", http)
	}
	if got, _, _, _ := u.counts(); got["up.vetto.test"] != 1 || got["evil.example"] != 0 {
		t.Errorf("upstream saw %v, want one request for up.vetto.test", got)
	}
}

// The relay lives exactly as long as the container: when the init dies
// (killed from the host, nothing told the relay) it exits by itself.
func TestRelayDiesWithContainer(t *testing.T) {
	e := relayEnv(t)
	u := newUpstream(t)
	cfg := u.runtimeConfig(e.tmp)
	bundle, _ := e.compilePolicy(relayPolicy("up.vetto.test"), policyProject(e), "sleep 600")
	id := e.id()
	if r := e.vetto("--config", cfg, "run", "-d", "-b", bundle, id); r.code != 0 {
		t.Fatalf("run -d: %s", r)
	}
	relayPid := relayOf(t, e, id)
	if err := syscall.Kill(e.initPid(id), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", relayPid))
		if err != nil || strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("relay %d still running 5s after its container's init died", relayPid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.mustVetto("delete", "--force", id)
}

// A relay that cannot be established refuses the launch and leaves
// nothing: a relay that could not drop root (uid 4294967295 is setresuid's
// "unchanged"), and settings the relay refuses that the policy parser
// cannot judge (an invalid A-label).
func TestRelayRefusedLeavesNothing(t *testing.T) {
	tests := []struct {
		name, config string
		rules        []string
		code         int
		want         string
	}{
		{"hardening fails", "[relay]\nuid = 4294967295\n", []string{"up.vetto.test"}, 125, "harden"},
		{"a rule only the relay judges", "", []string{"xn--zz.vetto.test"}, 1, "xn--zz.vetto.test"},
		{"an exempt range too broad", "[relay]\nexempt = [\"0.0.0.0/0\"]\n", []string{"up.vetto.test"}, 1, "too broad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := relayEnv(t)
			cfg := filepath.Join(e.tmp, "runtime.toml")
			os.WriteFile(cfg, []byte(tt.config), 0o644)
			bundle, _ := e.compilePolicy(relayPolicy(tt.rules...), policyProject(e), "touch RAN")
			id := e.id()
			r := e.vetto("--config", cfg, "run", "-b", bundle, id)
			if r.code != tt.code || !strings.Contains(r.stderr, "egress relay") || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("run: %s; want exit %d naming the relay and %q", r, tt.code, tt.want)
			}
			e.assertNothingLeft(id)
			if _, err := os.Stat(filepath.Join(e.tmp, "project", "RAN")); err == nil {
				t.Error("the refused container's process ran")
			}
			if left := relayProcesses(e.root); len(left) > 0 {
				t.Errorf("relay left after a refused launch: %v", left)
			}
		})
	}
}

// initPid is the container's init as `state` says.
func (e *env) initPid(id string) int {
	e.t.Helper()
	st := e.state(id)
	pid, _ := st["pid"].(float64)
	if pid <= 0 {
		e.t.Fatalf("state %s: no pid: %v", id, st)
	}
	return int(pid)
}

// relayExecutable is the sha256 of the file relay pid runs, after it
// checked that this is the relay executable the runtime wrote into its
// bin directory and not the runtime's own binary.
func relayExecutable(t *testing.T, pid int) [32]byte {
	t.Helper()
	sum := fileDigest(t, fmt.Sprintf("/proc/%d/exe", pid))
	if sum == fileDigest(t, binary) {
		t.Fatalf("the relay (pid %d) runs the runtime's own binary, not the relay executable", pid)
	}
	installed := installedHelper(t, "vetto-runtime-relay-", sum)
	if target, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || target != installed {
		t.Errorf("the relay runs %q (%v), want %s", target, err, installed)
	}
	return sum
}

// The built runtime links none of the relay's code (its HTTP and TLS
// stacks are what every command would start up otherwise): it starts each
// relay from the relay executable it embeds, written into its bin
// directory. A file planted under that name — a script, writable, or a
// link to one — is never run: create writes the embedded bytes over it,
// and the relay that serves is the real one, hardened as ever.
func TestRelayIsTheRelayExecutable(t *testing.T) {
	e := relayEnv(t)
	p := policyProject(e)
	bundle, _ := e.compilePolicy(relayPolicy("up.vetto.test"), p, "true")
	first := e.id()
	e.mustVetto("create", "-b", bundle, first)
	sum := relayExecutable(t, relayOf(t, e, first))
	e.mustVetto("delete", "--force", first)
	path := installedHelper(t, "vetto-runtime-relay-", sum)

	marker := filepath.Join(e.tmp, "planted-ran")
	script := "#!/bin/sh\ntouch " + marker + "\nexec sleep 60\n"
	// Beside the executable, on its file system: a hard link cannot cross
	// to the test's temporary directory where /tmp is a tmpfs (Debian 13).
	// No helper's prefix, so no prune touches it; removed at the end.
	elsewhere := filepath.Join(filepath.Dir(path), ".test-planted-"+e.id())
	if err := os.WriteFile(elsewhere, []byte(script), 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(elsewhere) })
	for _, tc := range []struct {
		name  string
		plant func() error
	}{
		{"a script, writable", func() error { return os.WriteFile(path, []byte(script), 0o755) }},
		{"a symlink to a script", func() error { return os.Symlink(elsewhere, path) }},
		{"a hard link of a script", func() error { return os.Link(elsewhere, path) }},
		{"removed", func() error { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := tc.plant(); err != nil {
				t.Fatal(err)
			}
			id := e.id()
			r := e.vetto("create", "-b", bundle, id)
			if _, err := os.Stat(marker); err == nil {
				t.Error("the planted file ran")
			}
			if r.code != 0 {
				t.Fatalf("create: %s", r)
			}
			pid := relayOf(t, e, id)
			if got := relayExecutable(t, pid); got != sum {
				t.Errorf("the relay runs a file of sha256 %x, want the embedded %x", got, sum)
			}
			status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if !strings.Contains(string(status), "Seccomp:\t2") || !strings.Contains(string(status), "NoNewPrivs:\t1") {
				t.Errorf("the relay is not hardened:\n%s", status)
			}
			e.mustVetto("delete", "--force", id)
		})
	}

	// A name the runtime cannot put its file under (a directory there,
	// which no rename replaces): there is no relay to start, and a
	// container whose network is the relay's is refused as not
	// established, leaving nothing; nothing else is run in its place.
	t.Run("a directory in its place", func(t *testing.T) {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(path) })
		id := e.id()
		r := e.vetto("run", "-b", bundle, id)
		if r.code != 125 || !strings.Contains(r.stderr, "relay executable") {
			t.Fatalf("run: %s; want exit 125 naming the relay executable", r)
		}
		e.assertNothingLeft(id)
		if left := relayProcesses(e.root); len(left) > 0 {
			t.Errorf("relay left after a refused launch: %v", left)
		}
	})
}
