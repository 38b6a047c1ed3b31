package relayproc

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/linux/relaywire"
	"github.com/vetto-dev/vetto-runtime/relay"
)

// Settings are the relay's settings from its config; with credentials,
// the roots their upstreams are verified with are parsed from RootCAs
// here, before the relay loses its files: it never reads the system's.
func Settings(c *relaywire.Config) (relay.Settings, error) {
	s := relay.Settings{
		Mode: relay.Mode(c.Mode), Allow: c.Allow, CheckSNI: c.CheckSNI,
		Resolvers: c.Resolvers, HostAddrs: c.HostAddrs, TestHosts: c.TestHosts, Exempt: c.Exempt,
	}
	if len(c.Credentials) == 0 {
		return s, nil
	}
	for _, cr := range c.Credentials {
		s.Credentials = append(s.Credentials, relay.Credential{Host: cr.Host, Header: cr.Header, Value: cr.Value})
	}
	s.RootCAs = x509.NewCertPool()
	if !s.RootCAs.AppendCertsFromPEM(c.RootCAs) {
		return s, errors.New("credentials: the CA bundle holds no certificate")
	}
	return s, nil
}

// Main is a container's egress relay (docs/network.md): the relay
// executable's whole life, `vetto-runtime-relay relay <state dir>`,
// started by the runtime's create (linux.StartRelay) and by nothing else.
// It reads its config from fd 3, takes its listeners, init pidfd, stats
// and audit files from the fds the config names, hardens itself
// (harden_linux.go), answers on the ready fd (relaywire.Ready) and serves
// until the container's init exits or it is told to stop (SIGTERM). Its
// exit status is 0 after a clean stop. It never opens a file or a
// listener of its own.
func Main(args []string) int {
	ready := os.NewFile(4, "ready") // until the config says otherwise
	answer := func(kind string, err error) int {
		fmt.Fprintf(os.Stderr, "vetto-runtime relay: %v\n", err)
		if ready != nil {
			fmt.Fprintf(ready, "%s: %v\n", kind, err)
		}
		return 1
	}
	fail := func(err error) int { return answer("error", err) }
	if len(args) != 3 || args[1] != relaywire.Arg {
		return fail(errors.New("usage: vetto-runtime-relay relay <state dir> (started by vetto-runtime create, not by hand)"))
	}
	cfgFile := os.NewFile(relaywire.ConfigFd, "config")
	if cfgFile == nil {
		return fail(errors.New("no config fd"))
	}
	// With credentials the config carries the CA bundle the runtime read
	// (at most 4 MiB) beside everything else.
	data, err := io.ReadAll(io.LimitReader(cfgFile, 8<<20))
	cfgFile.Close()
	if err != nil {
		return fail(fmt.Errorf("read config: %w", err))
	}
	var cfg relaywire.Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fail(fmt.Errorf("read config: %w", err))
	}
	if cfg.ReadyFd != 4 {
		ready = os.NewFile(uintptr(cfg.ReadyFd), "ready")
	}
	settings, err := Settings(&cfg)
	if err != nil {
		return answer("refused", err)
	}
	rcfg, err := relay.NewConfig(settings)
	if err != nil {
		// Before anything was touched: the runtime refuses the
		// request, by this line.
		return answer("refused", err)
	}
	// The values are the relay's now, in rcfg; these copies go, and the
	// config's bytes (which held them) are overwritten.
	cfg.Credentials, settings.Credentials = nil, nil
	clear(data)
	readyLine, err := relaywire.Ready(rcfg.CredentialHosts())
	if err != nil {
		return fail(err)
	}
	ls, err := relayListeners(cfg.Listeners)
	if err != nil {
		return fail(err)
	}
	stats := os.NewFile(uintptr(cfg.StatsFd), "stats")
	audit := &relayAudit{id: cfg.ID, spec: cfg.Spec, level: cfg.Level}
	for _, fd := range cfg.AuditFds {
		audit.files = append(audit.files, os.NewFile(uintptr(fd), "audit"))
	}
	initFd := cfg.InitFd
	// Before the filter and Landlock: the signal handler's set-up and the
	// seccomp filter's compilation.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, unix.SIGTERM, unix.SIGINT)
	filter, err := relayFilter()
	if err != nil {
		return fail(err)
	}
	if err := harden(cfg.UID, filter); err != nil {
		return fail(fmt.Errorf("harden: %w", err))
	}

	srv := relay.NewServer(rcfg, relay.Options{Audit: audit.write})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The container's end is the relay's: the init's pidfd turns readable
	// when it exits.
	go func() {
		waitReadable(initFd)
		cancel()
	}()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	sw := &statsWriter{f: stats, srv: srv}
	sw.write()
	go sw.every(ctx, 250*time.Millisecond)
	if _, err := ready.WriteString(readyLine); err != nil {
		return fail(fmt.Errorf("report ready: %w", err))
	}
	ready.Close()
	ready = nil
	serveErr := srv.Serve(ctx, ls)
	cancel()
	sw.write()
	if serveErr != nil {
		return fail(serveErr)
	}
	return 0
}

// relayListeners wraps the inherited sockets for relay.Serve; the IPv4 and
// ::1 twins of a port are served as one.
func relayListeners(list []relaywire.Listener) (relay.Listeners, error) {
	var ls relay.Listeners
	var proxy, dnsTCP []net.Listener
	var dnsUDP []net.PacketConn
	ls.Transparent = map[uint16]net.Listener{}
	for _, l := range list {
		f := os.NewFile(uintptr(l.Fd), "relay-"+l.Name)
		if f == nil {
			return ls, fmt.Errorf("listener %s: fd %d is not open", l.Name, l.Fd)
		}
		var (
			sl  net.Listener
			pc  net.PacketConn
			err error
		)
		if l.Stream {
			sl, err = net.FileListener(f)
		} else {
			pc, err = net.FilePacketConn(f)
		}
		f.Close() // the net package holds its own copy
		if err != nil {
			return ls, fmt.Errorf("listener %s: %w", l.Name, err)
		}
		switch {
		case l.Kind == "proxy" && l.Stream:
			proxy = append(proxy, sl)
		case l.Kind == "dns" && l.Stream:
			dnsTCP = append(dnsTCP, sl)
		case l.Kind == "dns":
			dnsUDP = append(dnsUDP, pc)
		case l.Kind == "transparent" && l.Stream && l.Port != 0:
			ls.Transparent[l.Port] = sl
		default:
			return ls, fmt.Errorf("listener %s: unknown kind %q", l.Name, l.Kind)
		}
	}
	ls.Proxy = joinListeners(proxy)
	ls.DNSTCP = joinListeners(dnsTCP)
	ls.DNSUDP = joinPacketConns(dnsUDP)
	return ls, nil
}

// waitReadable blocks until fd is readable (a pidfd: its process exited)
// or cannot be polled.
func waitReadable(fd int) {
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err == nil || !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// relayAudit writes one JSON line per relay decision to every audit log:
// the relay.Event's fields with the container's id, spec hash and level,
// as the runtime's own audit events carry them. One write(2) per line per
// file, O_APPEND: lines never interleave with the runtime's.
type relayAudit struct {
	id, spec, level string
	files           []*os.File
	failed          bool
}

type relayAuditLine struct {
	ID    string `json:"id"`
	Spec  string `json:"spec,omitempty"`
	Level string `json:"level,omitempty"`
	Type  string `json:"event"` // "relay"
	relay.Event
}

// write is relay.Options.Audit; the server serializes the calls.
func (a *relayAudit) write(e relay.Event) {
	line, err := json.Marshal(relayAuditLine{ID: a.id, Spec: a.spec, Level: a.level, Type: "relay", Event: e})
	if err != nil {
		fmt.Fprintf(os.Stderr, "vetto-runtime relay: encode audit event: %v\n", err)
		return
	}
	line = append(line, '\n')
	for _, f := range a.files {
		if _, err := f.Write(line); err != nil && !a.failed {
			// Said once; the decision was made and enforced either way.
			a.failed = true
			fmt.Fprintf(os.Stderr, "vetto-runtime relay: audit log: %v\n", err)
		}
	}
}

// statsWriter rewrites the stats file with the server's counters when
// they change. The counters only grow, so the JSON only grows too and is
// written over itself at offset 0 without a truncate.
type statsWriter struct {
	f    *os.File
	srv  *relay.Server
	mu   sync.Mutex
	last relay.Stats
	once bool
}

func (w *statsWriter) write() {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.srv.Stats()
	if w.once && st == w.last {
		return
	}
	data, err := json.Marshal(st)
	if err != nil {
		return
	}
	if _, err := w.f.WriteAt(data, 0); err != nil {
		fmt.Fprintf(os.Stderr, "vetto-runtime relay: stats: %v\n", err)
		return
	}
	w.last, w.once = st, true
}

func (w *statsWriter) every(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.write()
		case <-ctx.Done():
			return
		}
	}
}
