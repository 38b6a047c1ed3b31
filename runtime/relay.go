package runtime

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// The egress relay (docs/network.md) is a process beside the container, not
// in it: create starts it after the backend built the container and
// before pre-launch verification, which audits its checks with the
// others; it exits when the container's init does; teardown proves it
// gone and puts its counters in the receipt. The backend does the
// platform's part (RelayBackend); this file is the lifecycle's.

// Files in the container's state directory.
const (
	// relayFile records the relay process (RelayProcess), for teardown.
	relayFile = "relay.json"
	// RelayStatsFile is where the relay keeps its counters
	// (hooks.RelayStats as JSON), rewritten as they change.
	RelayStatsFile = "relay-stats.json"
	// RelayLogFile is the relay's stderr.
	RelayLogFile = "relay.log"
)

// relayStopTimeout bounds how long teardown waits for the relay to see its
// init gone and exit, before it kills it.
const relayStopTimeout = 2 * time.Second

// RelayBackend is implemented by backends that can run the egress relay
// for network allowlists. A backend without it makes such a launch a
// network degradation (launch.Host.Relay is false).
type RelayBackend interface {
	// StartRelay creates the relay's listening sockets inside c's network
	// namespace, checks each from the host, and, when every check passes,
	// starts the hardened relay process with them and checks that too.
	// The checks are HOST_FACT results for the pre-launch verification;
	// when one fails the relay is not started (p is nil) and the
	// verification refuses the launch. An error means the relay could
	// not be established; nothing of it is left then.
	StartRelay(c Container, req *RelayRequest) (p *RelayProcess, checks []hooks.Result, err error)
	// StopRelay makes sure no relay of the container whose state is in
	// dir runs: it waits up to timeout for p (nil when none was recorded)
	// to exit, kills it if it has not, and looks on the host for any
	// other process serving the container's relay. gone is true only when
	// none is left.
	StopRelay(dir string, p *RelayProcess, timeout time.Duration) (gone bool, err error)
}

// RelayRequest is everything the relay is told, decided by the runtime.
type RelayRequest struct {
	ID       string
	SpecHash string
	Level    string
	// Mode and Allow are the bundle's (dev.vetto.net, dev.vetto.net.allow).
	Mode  string
	Allow []string
	// Dir is the container's state directory: the stats file, the log.
	Dir string
	// AuditLogs are the files every decision is appended to: the
	// container's audit.jsonl and the host-wide --audit-log.
	AuditLogs []string
	// Self is the runtime's binary: the relay process runs it in a build
	// that embeds no relay executable.
	Self string
	// BinDir is CreateRequest's: where a backend keeps the relay
	// executable it embeds.
	BinDir string
	// UID is the unprivileged uid and gid the relay runs as.
	UID uint32
	// Resolvers are the upstream DNS servers: [relay] resolvers, or the
	// host's /etc/resolv.conf read now (the relay cannot read files).
	Resolvers []string
	// HostAddrs are the host's own interface addresses, never dialled.
	HostAddrs []netip.Addr
	// Operator settings from runtime.toml [relay], never a bundle's.
	TestHosts map[string][]netip.Addr
	Exempt    []netip.Prefix
	CheckSNI  bool
	// Credentials are the headers the relay adds (secrets: passed over
	// the config pipe only), RootCAs the PEM roots it verifies their
	// upstreams with.
	Credentials []RelayCredential
	RootCAs     []byte
}

// RelayProcess identifies a running relay: its pid and the start time
// /proc/<pid>/stat gives it, so that a recycled pid is never taken for it.
type RelayProcess struct {
	Pid       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
}

// startRelayLocked starts the container's relay when its spec asks for
// one and the backend can run one (otherwise the evaluator accepted the
// launch without network as a named degradation). The relay's checks wait
// in cr for the pre-launch verification.
func (r *Runtime) startRelayLocked(cr *created) error {
	sp := cr.plan.frozen.spec
	mode, allow, needed, err := spec.NetAnnotations(sp.Annotations)
	rb, ok := r.Backend.(RelayBackend)
	refs, cerr := spec.ParseCredentialAnnotation(sp.Annotations)
	if cerr != nil {
		return r.relayFailedLocked(cr, WithKind(ErrPreLaunchFailed, cerr))
	}
	if len(refs) > 0 && (!needed || !ok || !cr.plan.Decision.Relay) {
		// Credentials are the relay's to add: without one (network off,
		// or degraded to none) the workload would run without what it
		// was promised, or be tempted to get the token another way.
		return r.relayFailedLocked(cr, Errorf(ErrPreLaunchFailed, "credential for %s (%s): the bundle's network mode %q runs no egress relay to add it", refs[0].Host, refs[0].Source(), mode))
	}
	if !needed || !ok || !cr.plan.Decision.Relay {
		// No allowlist, or one the plan degraded to no network.
		return nil
	}
	if err != nil {
		// The evaluator refuses these before anything is built.
		return WithKind(ErrInvalidInput, err)
	}
	req, err := r.relayRequest(cr, mode, allow)
	if err != nil {
		return r.relayFailedLocked(cr, err)
	}
	if len(refs) > 0 {
		// Read last, just before the relay gets them: the values live in
		// this process only while it starts the relay.
		if req.Credentials, err = r.readCredentials(refs); err != nil {
			return r.relayFailedLocked(cr, err)
		}
		if req.RootCAs, err = r.readCABundle(); err != nil {
			return r.relayFailedLocked(cr, WithKind(ErrPreLaunchFailed, err))
		}
	}
	p, checks, err := rb.StartRelay(cr.c, req)
	if err != nil {
		return r.relayFailedLocked(cr, err)
	}
	cr.relayChecks = checks
	if p == nil {
		return nil
	}
	data, err := json.Marshal(p)
	if err == nil {
		err = writeFileAtomic(filepath.Join(r.Store.dir(cr.rec.ID), relayFile), data, 0o600)
	}
	if err != nil {
		// Teardown still finds it (StopRelay looks on the host), and it
		// exits with the init.
		return r.relayFailedLocked(cr, fmt.Errorf("record the relay process: %w", err))
	}
	return nil
}

// relayFailedLocked records a relay that could not be established. The
// container exists (Constructed), so its state is PreLaunchFailed, the
// fatal state of a sandbox not established before launch; the error's
// kind is ErrSpawnFailed (125), or ErrInvalidInput for the operator's bad
// settings.
func (r *Runtime) relayFailedLocked(cr *created, err error) error {
	err = fmt.Errorf("start the egress relay: %w", err)
	_ = r.Store.moveLocked(cr.rec, StatePreLaunchFailed, err.Error())
	if errors.Is(err, ErrInvalidInput) || errors.Is(err, ErrPreLaunchFailed) {
		return err
	}
	return WithKind(ErrSpawnFailed, err)
}

// relayRequest gathers what the relay is told: the bundle's mode and
// rules, the operator's settings, and what only the host can say (its
// resolvers, its addresses).
func (r *Runtime) relayRequest(cr *created, mode string, allow []string) (*RelayRequest, error) {
	if r.Self == "" {
		return nil, errors.New("the runtime does not know its own executable")
	}
	rc := r.Config.relay()
	dir := r.Store.dir(cr.rec.ID)
	req := &RelayRequest{
		ID: cr.rec.ID, SpecHash: cr.rec.SpecHash, Level: cr.rec.Level.String(),
		Mode: mode, Allow: allow, Dir: dir,
		AuditLogs: []string{filepath.Join(dir, auditFile)},
		Self:      r.Self, BinDir: r.binDir(), UID: r.Config.relayUID(), CheckSNI: rc.CheckSNI,
		Resolvers: rc.Resolvers,
	}
	if r.Store.AuditLog != "" {
		req.AuditLogs = append(req.AuditLogs, r.Store.AuditLog)
	}
	if len(req.Resolvers) == 0 {
		var err error
		if req.Resolvers, err = hostResolvers("/etc/resolv.conf"); err != nil {
			return nil, err
		}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("the host's addresses: %w", err)
	}
	for _, a := range addrs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			req.HostAddrs = append(req.HostAddrs, pfx.Addr())
		}
	}
	// Parsed here, validated by runtime.toml's loader already.
	names := make([]string, 0, len(rc.TestHosts))
	for n := range rc.TestHosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, a := range rc.TestHosts[n] {
			addr, err := netip.ParseAddr(a)
			if err != nil {
				return nil, Errorf(ErrInvalidInput, "%s: [relay] test_hosts %q: %v", r.Config, n, err)
			}
			if req.TestHosts == nil {
				req.TestHosts = map[string][]netip.Addr{}
			}
			req.TestHosts[n] = append(req.TestHosts[n], addr)
		}
	}
	for _, p := range rc.Exempt {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, Errorf(ErrInvalidInput, "%s: [relay] exempt %q: %v", r.Config, p, err)
		}
		req.Exempt = append(req.Exempt, pfx)
	}
	return req, nil
}

// hostResolvers reads the nameserver lines of a resolv.conf. A host that
// names none has no resolver for the relay to ask: a launch refused here
// is one that could reach nothing.
func hostResolvers(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the host's resolvers: %w (set [relay] resolvers in runtime.toml)", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "nameserver" {
			if a, err := netip.ParseAddr(fields[1]); err == nil && a.Zone() == "" {
				out = append(out, a.String())
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("the host's resolvers: %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the host's resolvers: %s names no nameserver (set [relay] resolvers in runtime.toml)", path)
	}
	return out, nil
}

// relayTeardown fills the receipt's relay part: the relay is gone, proved
// on the host, and what it counted.
func (r *Runtime) relayTeardown(rec *Record, receipt *hooks.Receipt) {
	dir := r.Store.dir(rec.ID)
	var p *RelayProcess
	data, err := os.ReadFile(filepath.Join(dir, relayFile))
	switch {
	case err == nil:
		p = &RelayProcess{}
		if err := json.Unmarshal(data, p); err != nil {
			receipt.Problems = append(receipt.Problems, fmt.Sprintf("relay record %s: %v", relayFile, err))
			p = nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		receipt.Problems = append(receipt.Problems, fmt.Sprintf("relay record: %v", err))
	}
	rb, ok := r.Backend.(RelayBackend)
	if !ok {
		// A backend without a relay started none; a record says otherwise.
		receipt.RelayStopped = p == nil
		return
	}
	if _, _, needed, _ := spec.NetAnnotations(rec.Annotations); p == nil && !needed && !rec.lost {
		// No relay was asked for and none recorded: nothing to look for
		// (the host-wide /proc scan is for a relay whose record a killed
		// create did not write, or whose container's record is lost).
		receipt.RelayStopped = true
		return
	}
	gone, err := rb.StopRelay(dir, p, relayStopTimeout)
	if err != nil {
		receipt.Problems = append(receipt.Problems, "stop the relay: "+err.Error())
	}
	receipt.RelayStopped = gone && err == nil
	if data, err := os.ReadFile(filepath.Join(dir, RelayStatsFile)); err == nil && len(data) > 0 {
		// Empty: the relay never got to serving (a launch it refused).
		var st hooks.RelayStats
		if err := json.Unmarshal(data, &st); err != nil {
			receipt.Problems = append(receipt.Problems, fmt.Sprintf("relay stats %s: %v", RelayStatsFile, err))
		} else {
			receipt.Relay = &st
		}
	} else if p != nil && !errors.Is(err, fs.ErrNotExist) {
		receipt.Problems = append(receipt.Problems, fmt.Sprintf("relay stats: %v", err))
	}
}
