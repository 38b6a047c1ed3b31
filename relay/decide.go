package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
)

// Resolver looks names up. *net.Resolver satisfies it. The relay passes
// only normalized, fully qualified names (with the root dot, so no search
// domain of the host is ever appended).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// decision is the outcome for one (host, port).
type decision struct {
	allow   bool
	host    string // normalized, or as sent when it could not be
	port    uint16
	rule    string // allow: Rule.String(); deny: the denial id
	reason  string
	suggest string       // deny: the policy entry that would allow it, if one would
	answers []netip.Addr // resolution's answers, before the deny set
	addrs   []netip.Addr // the answers that passed the deny set, in order
}

// Denial ids (Event.Rule, X-Vetto-Deny) produced outside the deny set.
const (
	denyNoRule         = "no-rule"
	denyPort           = "port"
	denyIPLiteral      = "ip-literal"
	denyNumericName    = "numeric-name"
	denyUserinfo       = "userinfo"
	denyBadName        = "bad-name"
	denyResolve        = "resolve"
	denyHostMismatch   = "host-mismatch"
	denySNIMismatch    = "sni-mismatch"
	denySNIMissing     = "sni-missing"
	denyNotTLS         = "not-tls"
	denyMethod         = "method"
	denyBadRequest     = "bad-request"
	denyHeaderTooLarge = "header-too-large"
	denyTimeout        = "timeout"
	denySOCKS          = "socks"
	denyNoName         = "no-name"
	denyDNSType        = "dns-type"
	denyLimit          = "limit"
)

func denied(host string, port uint16, id, reason string) decision {
	return decision{host: host, port: port, rule: id, reason: reason}
}

// nameDenial maps a NormalizeName error to its denial id.
func nameDenial(err error) string {
	switch {
	case errors.Is(err, ErrIPLiteral):
		return denyIPLiteral
	case errors.Is(err, ErrNumericName):
		return denyNumericName
	case errors.Is(err, ErrUserinfo):
		return denyUserinfo
	}
	return denyBadName
}

// suggestion is the network.allow entry that would allow name on port in
// mode: the bare name for 80 and 443 at allowlist, host:port otherwise.
func suggestion(mode Mode, name string, port uint16) string {
	if mode == ModeAllowlist && (port == 80 || port == 443) {
		return name
	}
	return fmt.Sprintf("%s:%d", name, port)
}

// decide is the whole decision for a connection to host:port, in the
// order of docs/network.md: normalize, match a rule, resolve (once, pinned),
// drop every answer in the deny set. It never resolves a name no rule
// allows.
func (s *Server) decide(ctx context.Context, host string, port uint16) decision {
	name, err := NormalizeName(host)
	if err != nil {
		return denied(host, port, nameDenial(err), err.Error())
	}
	r, ok, known := s.cfg.match(name, port)
	if !ok {
		d := denied(name, port, denyNoRule, fmt.Sprintf("no rule allows %s", name))
		if known {
			d.rule, d.reason = denyPort, fmt.Sprintf("%s is allowed, but not on port %d", name, port)
		}
		d.suggest = suggestion(s.cfg.mode, name, port)
		return d
	}
	answers, err := s.lookup(ctx, name)
	if err != nil {
		return decision{host: name, port: port, rule: denyResolve, reason: err.Error()}
	}
	d := decision{host: name, port: port, answers: answers}
	var first denial
	for _, a := range answers {
		if dn, ok := s.cfg.judge(a); !ok {
			if first.id == "" {
				first = dn
			}
			continue
		}
		d.addrs = append(d.addrs, a.Unmap())
	}
	if len(d.addrs) == 0 {
		d.rule = "deny-set:" + first.id
		d.reason = fmt.Sprintf("every address of %s is in the deny set: %s", name, first.why)
		return d
	}
	d.allow, d.rule = true, r.String()
	return d
}

// pinned is one name's resolution, shared by every connection to it for
// the server's life: a name that answers with TTL 0 and then another
// address (DNS rebinding) keeps the first answer.
type pinned struct {
	done    chan struct{}
	answers []netip.Addr
	err     error
}

// pins is the server's table of resolutions, bounded at maxPinned names;
// when full, the oldest is forgotten (its next use resolves again, and
// that answer passes the deny set like any other).
type pins struct {
	mu    sync.Mutex
	byKey map[string]*pinned
	order []string
}

// lookup resolves a normalized name once: from TestHosts, or with the
// resolver, and pins the answer. Concurrent lookups of one name share one
// query; a failed lookup is not pinned.
func (s *Server) lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	if addrs, ok := s.cfg.testHosts[name]; ok {
		return addrs, nil
	}
	s.pins.mu.Lock()
	if s.pins.byKey == nil {
		s.pins.byKey = map[string]*pinned{}
	}
	e, ok := s.pins.byKey[name]
	if !ok {
		e = &pinned{done: make(chan struct{})}
		s.pins.byKey[name] = e
		s.pins.order = append(s.pins.order, name)
		if len(s.pins.order) > maxPinned {
			delete(s.pins.byKey, s.pins.order[0])
			s.pins.order = s.pins.order[1:]
		}
	}
	s.pins.mu.Unlock()
	if !ok {
		// ctx is the server's: it ends only when Serve does, and then
		// every waiter gives up too.
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		e.answers, e.err = s.resolver.LookupNetIP(rctx, "ip", name+".")
		cancel()
		if e.err == nil && len(e.answers) == 0 {
			e.err = fmt.Errorf("resolve %s: no addresses", name)
		} else if e.err != nil {
			e.err = fmt.Errorf("resolve %s: %w", name, e.err)
		}
		if e.err != nil {
			s.pins.mu.Lock()
			if s.pins.byKey[name] == e {
				delete(s.pins.byKey, name)
				for i, n := range s.pins.order {
					if n == name {
						s.pins.order = append(s.pins.order[:i], s.pins.order[i+1:]...)
						break
					}
				}
			}
			s.pins.mu.Unlock()
		}
		close(e.done)
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("resolve %s: %w", name, ctx.Err())
	}
	return e.answers, e.err
}

// newResolver is the Go resolver (never the C library's: it would read
// names like 127.1 as addresses and consult NSS modules) asking the
// configured upstreams in turn, or the host's resolv.conf when there are
// none.
func newResolver(upstreams []netip.AddrPort, d *net.Dialer) *net.Resolver {
	r := &net.Resolver{PreferGo: true}
	if len(upstreams) == 0 {
		return r
	}
	var mu sync.Mutex
	next := 0
	r.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
		mu.Lock()
		up := upstreams[next%len(upstreams)]
		next++
		mu.Unlock()
		// network is "udp" or "tcp" as the resolver chose (TCP after a
		// truncated answer); the address it chose from resolv.conf is
		// replaced by the operator's.
		if strings.HasPrefix(network, "udp") {
			network = "udp"
		} else {
			network = "tcp"
		}
		return d.DialContext(ctx, network, up.String())
	}
	return r
}
