package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Options wire a server to its runtime.
type Options struct {
	// Audit receives every Event, from one goroutine at a time (the server
	// serializes the calls). A slow Audit slows the relay, never loses
	// events. Nil discards them.
	Audit func(Event)
	// Resolver replaces the Go resolver built from Settings.Resolvers.
	Resolver Resolver
	// Dialer is the template for upstream connections (a source address,
	// a mark). Its Control or ControlContext still runs, after the relay's
	// own check. Nil: a plain net.Dialer.
	Dialer *net.Dialer
}

// Listeners are the sockets the server serves on. The runtime creates
// them inside the container's network namespace; the server never
// creates a listener. Each may be nil, but not all. Serve owns them: it
// closes them when it returns.
type Listeners struct {
	// Proxy takes HTTP CONNECT, absolute-form HTTP and SOCKS5 on one port,
	// told apart by the first byte.
	Proxy net.Listener
	// DNSUDP and DNSTCP are the DNS stub's sockets (port 53).
	DNSUDP net.PacketConn
	DNSTCP net.Listener
	// Transparent maps the port a listener stands for (80, 443: what the
	// workload connected to, and what the rules are matched with) to the
	// listener. It must accept connections to the stub's addresses
	// (Settings.FakeRange), so it is bound to the unspecified address or
	// inside that range.
	Transparent map[uint16]net.Listener
}

// Server is one container's relay.
type Server struct {
	cfg      *Config
	audit    func(Event)
	auditMu  sync.Mutex
	resolver Resolver
	dialer   net.Dialer
	pins     pins
	fake     *fakePool
	slots    chan struct{}
	served   atomic.Bool

	allowed, denied, bytesUp, bytesDown, dnsAnswered, dnsRefused, credentialed atomic.Uint64
}

// NewServer returns a server for cfg, which must come from NewConfig.
func NewServer(cfg *Config, opt Options) *Server {
	s := &Server{cfg: cfg, audit: opt.Audit, resolver: opt.Resolver}
	if opt.Dialer != nil {
		s.dialer = *opt.Dialer
	}
	if cfg != nil {
		if s.dialer.Timeout == 0 {
			s.dialer.Timeout = cfg.dialTimeout
		}
		if s.resolver == nil {
			s.resolver = newResolver(cfg.resolvers, &net.Dialer{Timeout: resolveTimeout})
		}
		s.fake = newFakePool(cfg.fakeRange)
		s.slots = make(chan struct{}, cfg.maxConns)
	}
	return s
}

// Stats returns the counters. It is safe to call at any time, from any
// goroutine, also after Serve has returned.
func (s *Server) Stats() Stats {
	return Stats{
		Allowed: s.allowed.Load(), Denied: s.denied.Load(),
		BytesUp: s.bytesUp.Load(), BytesDown: s.bytesDown.Load(),
		DNSAnswered: s.dnsAnswered.Load(), DNSRefused: s.dnsRefused.Load(),
		Credentialed: s.credentialed.Load(),
	}
}

// Serve serves on ls until ctx is done or a listener fails, then closes
// every listener and connection and waits for all of them: when it
// returns, nothing of the server runs (the teardown receipt's
// relay_stopped). It returns nil after ctx is done, else the first
// listener's error. It may be called once.
func (s *Server) Serve(ctx context.Context, ls Listeners) error {
	if s.cfg == nil {
		return errors.New("relay serve: no config (use NewConfig)")
	}
	if ls.Proxy == nil && ls.DNSUDP == nil && ls.DNSTCP == nil && len(ls.Transparent) == 0 {
		return errors.New("relay serve: no listeners")
	}
	if !s.served.CompareAndSwap(false, true) {
		return errors.New("relay serve: already served")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	fatal := func(err error) { cancel(err) }
	closers := []func() error{}
	acceptOn := func(what string, proto Protocol, l net.Listener, handle func(context.Context, net.Conn)) {
		closers = append(closers, l.Close)
		wg.Go(func() {
			if err := s.accept(ctx, &wg, l, proto, handle); err != nil {
				fatal(fmt.Errorf("relay serve %s %s: %w", what, l.Addr(), err))
			}
		})
	}
	if ls.Proxy != nil {
		acceptOn("proxy", ProtoProxy, ls.Proxy, s.serveProxy)
	}
	if ls.DNSTCP != nil {
		acceptOn("dns tcp", ProtoDNS, ls.DNSTCP, s.serveDNSTCP)
	}
	for port, l := range ls.Transparent {
		if l == nil {
			continue
		}
		acceptOn(fmt.Sprintf("transparent :%d", port), ProtoTransparent, l, func(ctx context.Context, c net.Conn) {
			s.serveTransparent(ctx, c, port)
		})
	}
	if pc := ls.DNSUDP; pc != nil {
		closers = append(closers, pc.Close)
		wg.Go(func() {
			if err := s.serveDNSUDP(ctx, pc); err != nil {
				fatal(fmt.Errorf("relay serve dns udp %s: %w", pc.LocalAddr(), err))
			}
		})
	}
	<-ctx.Done()
	for _, closeIt := range closers {
		_ = closeIt()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// accept runs l's accept loop. Each connection gets a goroutine, closed
// when ctx is done; past MaxConns a connection is refused at once (with
// its event), so the count of goroutines and sockets stays bounded.
func (s *Server) accept(ctx context.Context, wg *sync.WaitGroup, l net.Listener, proto Protocol, handle func(context.Context, net.Conn)) error {
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// EMFILE and friends: wait, as net/http does, rather
				// than spin or give up.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(backoff):
					continue
				case <-ctx.Done():
					return nil
				}
			}
			return err
		}
		backoff = 0
		select {
		case s.slots <- struct{}{}:
		default:
			s.emit(Event{Time: time.Now(), Protocol: proto, Client: c.RemoteAddr().String(), Verdict: Deny, Rule: denyLimit,
				Reason: fmt.Sprintf("%d connections are open: the limit", cap(s.slots))})
			c.Close()
			continue
		}
		wg.Go(func() {
			defer func() { <-s.slots }()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			defer c.Close()
			handle(ctx, c)
		})
	}
}

// isTemporary reports the accept errors worth retrying: out of file
// descriptors or memory, or a connection reset before it was accepted.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// emit counts and delivers one event.
func (s *Server) emit(e Event) {
	if e.Protocol == ProtoDNS {
		if e.Verdict == Allow {
			s.dnsAnswered.Add(1)
		} else {
			s.dnsRefused.Add(1)
		}
	} else if e.Verdict == Allow {
		s.allowed.Add(1)
	} else {
		s.denied.Add(1)
	}
	if s.audit == nil {
		return
	}
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	s.audit(e)
}

// event starts an event for a connection accepted now.
func event(proto Protocol, c net.Conn) Event {
	return Event{Time: time.Now(), Protocol: proto, Client: c.RemoteAddr().String()}
}

// finish fills an event from a decision.
func (e *Event) fromDecision(d decision) {
	e.Host, e.Port, e.Answers, e.Rule = d.host, d.port, d.answers, d.rule
	if d.allow {
		e.Verdict = Allow
	} else {
		// The audit line says which rule to add, as the 403 body does
		// (docs/network.md: a refusal says which rule to add).
		e.Verdict, e.Reason = Deny, d.reason
		if d.suggest != "" {
			e.Reason += fmt.Sprintf(": add %q to network.allow", d.suggest)
		}
	}
}
