package runtime

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// relayBackend is the fake backend with an egress relay: it records the
// request, answers with the checks and the error the test sets, and says
// at teardown whether the relay is gone.
type relayBackend struct {
	*fakeBackend
	req      *RelayRequest
	checks   []hooks.Result
	startErr error
	running  bool // a relay process the fake started and nothing stopped
	stopped  []*RelayProcess
	stuck    bool // StopRelay cannot make it go
	stats    *hooks.RelayStats
}

func (b *relayBackend) StartRelay(c Container, req *RelayRequest) (*RelayProcess, []hooks.Result, error) {
	b.req = req
	if b.startErr != nil {
		return nil, nil, b.startErr
	}
	for _, r := range b.checks {
		if r.Verdict != hooks.Pass {
			return nil, b.checks, nil
		}
	}
	b.running = true
	if b.stats != nil {
		data, _ := json.Marshal(b.stats)
		if err := os.WriteFile(filepath.Join(req.Dir, RelayStatsFile), data, 0o600); err != nil {
			return nil, nil, err
		}
	}
	return &RelayProcess{Pid: 4242, StartTime: 7}, b.checks, nil
}

func (b *relayBackend) StopRelay(dir string, p *RelayProcess, timeout time.Duration) (bool, error) {
	b.stopped = append(b.stopped, p)
	if b.stuck {
		return false, nil
	}
	b.running = false
	return true, nil
}

func relayBundle(t *testing.T, allow string) string {
	return writeBundle(t, func(s *specs.Spec) {
		s.Annotations = map[string]string{"dev.vetto.net": "allowlist"}
		if allow != "" {
			s.Annotations["dev.vetto.net.allow"] = allow
		}
	})
}

func newRelayRuntime(t *testing.T) (*Runtime, *relayBackend) {
	b := &relayBackend{fakeBackend: &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}}
	r := newTestRuntime(t, b.fakeBackend, fakeNamespaces{})
	r.Backend = b
	r.Self = "/usr/local/bin/vetto-runtime"
	r.Store.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	r.Config = &Config{}
	r.Config.Relay = RelayConfig{Resolvers: []string{"192.0.2.53"}, UID: 4000, TestHosts: map[string][]string{"up.test": {"10.213.0.2"}}, Exempt: []string{"10.213.0.2/32"}}
	return r, b
}

var passingRelayChecks = []hooks.Result{{Check: "relay/socket/proxy", Verdict: hooks.Pass, Evidence: hooks.HostFact}, {Check: "relay/process", Verdict: hooks.Pass, Evidence: hooks.HostFact}}

// create starts the relay with the bundle's rules and the operator's
// settings, audits its checks with the pre-launch verdicts, and teardown
// proves it gone and puts its counters in the receipt.
func TestRelayLifecycle(t *testing.T) {
	r, b := newRelayRuntime(t)
	b.checks = passingRelayChecks
	b.stats = &hooks.RelayStats{Allowed: 3, Denied: 2, BytesUp: 100, BytesDown: 2000, DNSAnswered: 4, DNSRefused: 1}
	if err := r.Create(CreateOptions{ID: "c1", Bundle: relayBundle(t, `["example.com","*.npmjs.org:443"]`)}); err != nil {
		t.Fatal(err)
	}
	req := b.req
	if req == nil {
		t.Fatal("no relay started")
	}
	if req.Mode != "allowlist" || !slices.Equal(req.Allow, []string{"example.com", "*.npmjs.org:443"}) || req.UID != 4000 ||
		!slices.Equal(req.Resolvers, []string{"192.0.2.53"}) || len(req.TestHosts["up.test"]) != 1 || len(req.Exempt) != 1 ||
		req.ID != "c1" || req.SpecHash == "" || req.Self != r.Self || req.AuditLogs[0] != filepath.Join(r.Store.dir("c1"), auditFile) {
		t.Errorf("relay request %+v", req)
	}
	audit, _ := os.ReadFile(filepath.Join(r.Store.dir("c1"), auditFile))
	if !strings.Contains(string(audit), `"check":"relay/socket/proxy"`) || !strings.Contains(string(audit), `"check":"relay/process"`) {
		t.Errorf("the relay's checks are not among the audited verdicts:\n%s", audit)
	}
	if err := r.Delete("c1", true); err != nil {
		t.Fatal(err)
	}
	if b.running || len(b.stopped) != 1 || b.stopped[0] == nil || b.stopped[0].Pid != 4242 {
		t.Fatalf("teardown did not stop the recorded relay: stopped %v", b.stopped)
	}
	var receipt *hooks.Receipt
	for _, line := range strings.Split(string(mustRead(t, r.Store.AuditLog)), "\n") {
		var ev AuditEvent
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Receipt != nil {
			receipt = ev.Receipt
		}
	}
	if receipt == nil || !receipt.RelayStopped || receipt.Relay == nil || *receipt.Relay != *b.stats {
		t.Fatalf("receipt %+v, want the relay stopped with its stats", receipt)
	}
}

// A relay check that fails refuses the launch (125) and leaves nothing:
// the relay is not started, the container is destroyed.
func TestRelayCheckFailureRefuses(t *testing.T) {
	r, b := newRelayRuntime(t)
	b.checks = []hooks.Result{{Check: "relay/socket/proxy", Verdict: hooks.Fail, Evidence: hooks.HostFact, Expected: "in the init's network namespace", Found: "in the host's"}}
	err := r.Create(CreateOptions{ID: "c1", Bundle: relayBundle(t, `["example.com"]`)})
	if !errors.Is(err, ErrPreLaunchFailed) || ExitCode(err) != ExitSandbox || !strings.Contains(err.Error(), "relay/socket/proxy") {
		t.Fatalf("Create = %v (exit %d), want ErrPreLaunchFailed naming the check", err, ExitCode(err))
	}
	if b.running || len(b.containers) != 0 {
		t.Errorf("left behind: relay running %v, containers %v", b.running, b.containers)
	}
	if ids, _ := r.Store.ids(); len(ids) != 0 {
		t.Errorf("state left: %v", ids)
	}
}

// A relay that cannot be established refuses the launch with 125 and
// leaves nothing.
func TestRelayStartFailureRefuses(t *testing.T) {
	r, b := newRelayRuntime(t)
	b.startErr = errors.New("setns: operation not permitted")
	err := r.Create(CreateOptions{ID: "c1", Bundle: relayBundle(t, `["example.com"]`)})
	if !errors.Is(err, ErrSpawnFailed) || ExitCode(err) != ExitSandbox || !strings.Contains(err.Error(), "start the egress relay: setns") {
		t.Fatalf("Create = %v (exit %d), want ErrSpawnFailed", err, ExitCode(err))
	}
	if len(b.containers) != 0 {
		t.Errorf("containers left: %v", b.containers)
	}
	if ids, _ := r.Store.ids(); len(ids) != 0 {
		t.Errorf("state left: %v", ids)
	}
}

// A relay teardown cannot make go is never a clean receipt.
func TestRelayStuckIsIncomplete(t *testing.T) {
	r, b := newRelayRuntime(t)
	b.checks = passingRelayChecks
	if err := r.Create(CreateOptions{ID: "c1", Bundle: relayBundle(t, `["example.com"]`)}); err != nil {
		t.Fatal(err)
	}
	b.stuck = true
	err := r.Delete("c1", true)
	if !errors.Is(err, ErrTeardownIncomplete) || !strings.Contains(err.Error(), "relay still running") {
		t.Fatalf("Delete = %v, want ErrTeardownIncomplete: relay still running", err)
	}
	b.stuck = false
	if err := r.Delete("c1", true); err != nil {
		t.Fatalf("delete --force after the relay went: %v", err)
	}
}

// Bad annotations are refused before anything is built (exit 1); a
// container without an allowlist starts no relay.
func TestRelayAnnotations(t *testing.T) {
	for _, tt := range []struct {
		name, allow string
	}{{"no rules", ""}, {"empty", `[]`}, {"IP literal", `["10.0.0.1"]`}, {"not JSON", `example.com`}} {
		t.Run(tt.name, func(t *testing.T) {
			r, b := newRelayRuntime(t)
			b.checks = passingRelayChecks
			err := r.Create(CreateOptions{ID: "c1", Bundle: relayBundle(t, tt.allow)})
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "network.annotation") {
				t.Fatalf("Create = %v, want ErrInvalidInput [network.annotation]", err)
			}
			if b.req != nil || len(b.containers) != 0 {
				t.Errorf("built something for a refused launch")
			}
		})
	}
	r, b := newRelayRuntime(t)
	if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}); err != nil {
		t.Fatal(err)
	}
	if b.req != nil {
		t.Error("a relay for a container without an allowlist")
	}
	if err := r.Delete("c1", true); err != nil {
		t.Fatal(err)
	}
	if len(b.stopped) != 0 {
		t.Errorf("teardown looked for a relay of a container that asked for none: %v", b.stopped)
	}
	// One that asked for a relay and has no record (a create killed
	// between starting the relay and recording it) is looked for.
	r, b = newRelayRuntime(t)
	b.checks = passingRelayChecks
	if err := r.Create(CreateOptions{ID: "c2", Bundle: relayBundle(t, `["example.com"]`)}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.Store.dir("c2"), relayFile)); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete("c2", true); err != nil {
		t.Fatal(err)
	}
	if len(b.stopped) != 1 || b.stopped[0] != nil {
		t.Errorf("teardown of an allowlist container without a relay record: StopRelay calls %v, want one without a process", b.stopped)
	}
}

func TestHostResolvers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "resolv.conf")
	os.WriteFile(path, []byte("# c\nsearch corp.example\nnameserver 10.0.0.53\nnameserver fe80::1%eth0\nnameserver 2001:db8::53\noptions ndots:2\nnameserver bogus\n"), 0o644)
	got, err := hostResolvers(path)
	if err != nil || !slices.Equal(got, []string{"10.0.0.53", "2001:db8::53"}) {
		t.Fatalf("hostResolvers = %v, %v", got, err)
	}
	os.WriteFile(path, []byte("search x\n"), 0o644)
	if _, err := hostResolvers(path); err == nil {
		t.Fatal("a resolv.conf with no nameserver gives resolvers")
	}
}

func TestRelayConfig(t *testing.T) {
	good := "[relay]\nresolvers = [\"192.0.2.53\", \"[2001:db8::53]:53\"]\nuid = 4000\nexempt = [\"10.213.0.0/24\"]\ncheck_sni = true\n[relay.test_hosts]\n\"up.test\" = [\"10.213.0.2\"]\n"
	c, err := ParseConfig("r.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.relayUID() != 4000 || !c.Relay.CheckSNI || len(c.Relay.TestHosts["up.test"]) != 1 {
		t.Errorf("parsed %+v", c.Relay)
	}
	if (*Config)(nil).relayUID() != DefaultRelayUID {
		t.Error("no config: not nobody")
	}
	for _, bad := range []string{
		"[relay]\nresolver = [\"1.1.1.1\"]\n",
		"[relay]\nresolvers = [\"dns.example\"]\n",
		"[relay]\nexempt = [\"10.0.0.1\"]\n",
		"[relay.test_hosts]\n\"a.test\" = [\"a.test\"]\n",
		"[relay.test_hosts]\n\"a.test\" = []\n",
		"[relay]\nuid = -1\n",
	} {
		if _, err := ParseConfig("r.toml", []byte(bad)); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("ParseConfig(%q) = %v, want ErrInvalidInput", bad, err)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
