package relay

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// fakePool hands out the DNS stub's addresses: one per allowed name, from
// Settings.FakeRange, stable for the server's life (a workload that
// resolved a name an hour ago still reaches it). The range bounds the
// names, and so the pool's memory: when it is full, new names are
// refused.
type fakePool struct {
	mu     sync.Mutex
	next   netip.Addr
	last   netip.Addr
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
}

func newFakePool(pfx netip.Prefix) *fakePool {
	a := pfx.Addr().As4()
	v := binary.BigEndian.Uint32(a[:]) | (1<<(32-pfx.Bits()) - 1)
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return &fakePool{
		next:   pfx.Addr().Next(),         // not the network address
		last:   netip.AddrFrom4(b).Prev(), // nor the all-ones one
		byName: map[string]netip.Addr{},
		byAddr: map[netip.Addr]string{},
	}
}

// addr returns name's address, giving it one if it has none.
func (p *fakePool) addr(name string) (netip.Addr, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.byName[name]; ok {
		return a, true
	}
	if !p.next.IsValid() || p.last.Less(p.next) {
		return netip.Addr{}, false
	}
	a := p.next
	p.next = a.Next()
	p.byName[name], p.byAddr[a] = a, name
	return a, true
}

// name returns the name an address was given to.
func (p *fakePool) name(a netip.Addr) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ok := p.byAddr[a.Unmap()]
	return n, ok
}

// serveTransparent serves a connection accepted on the transparent
// listener for port: a program that ignored the proxy variables, resolved
// an allowed name through the stub and connected to its address. The
// local address names the host; the ClientHello's SNI (TLS) or each
// request's Host header (HTTP) must name the same, and then it is decided
// like any proxied connection to name:port.
func (s *Server) serveTransparent(ctx context.Context, nc net.Conn, port uint16) {
	ev := event(ProtoTransparent, nc)
	ev.Port = port
	local, err := netip.ParseAddrPort(nc.LocalAddr().String())
	name, ok := "", false
	if err == nil {
		name, ok = s.fake.name(local.Addr())
	}
	if !ok {
		s.refuse(&ev, denied("", port, denyNoName, fmt.Sprintf("%s is not an address the DNS stub gave to a name", nc.LocalAddr())))
		return
	}
	c := &conn{Conn: nc}
	c.head(-1, time.Now().Add(s.cfg.handshake))
	br := bufio.NewReaderSize(c, headBuffer)
	b, err := br.Peek(1)
	switch {
	case err != nil:
		d := headDenial(err, c)
		d.host, d.port = name, port
		s.refuse(&ev, d)
	case b[0] == 0x16:
		s.transparentTLS(ctx, nc, c, br, ev, target{name, port})
	case b[0] >= 'A' && b[0] <= 'Z':
		s.transparentHTTP(ctx, nc, c, br, ev, target{name, port})
	default:
		s.refuse(&ev, denied(name, port, denyNotTLS, fmt.Sprintf("first byte 0x%02x is neither TLS nor HTTP", b[0])))
	}
}

func (s *Server) transparentTLS(ctx context.Context, nc net.Conn, c *conn, br *bufio.Reader, ev Event, t target) {
	c.raw()
	hello, sni, err := readClientHello(br)
	ev.SNI = sni
	var d decision
	switch n, nerr := NormalizeName(sni); {
	case err != nil && isTimeout(err):
		d = denied(t.name, t.port, denyTimeout, fmt.Sprintf("no TLS ClientHello within %s", s.cfg.handshake))
	case err != nil:
		d = denied(t.name, t.port, denyNotTLS, fmt.Sprintf("TLS ClientHello: %v", err))
	case sni == "":
		d = denied(t.name, t.port, denySNIMissing, fmt.Sprintf("the TLS ClientHello has no server name; this address is %s's", t.name))
	case nerr != nil || n != t.name:
		d = denied(t.name, t.port, denySNIMismatch, fmt.Sprintf("the TLS server name %q is not %s, whose address this is", sni, t.name))
	default:
		d = s.decide(ctx, t.name, t.port)
	}
	if !d.allow {
		s.refuse(&ev, d)
		return
	}
	nc.SetReadDeadline(time.Time{})
	ev.fromDecision(d)
	up, addr, err := s.dial(ctx, d)
	if err != nil {
		ev.Reason = err.Error()
		s.done(&ev)
		return
	}
	ev.Addr = addr
	s.tunnel(ctx, nc, br, up, &ev, t.name, hello, false)
}

// transparentHTTP serves plain HTTP on a transparent port: origin-form
// requests, each decided on its own, Host checked against the name.
func (s *Server) transparentHTTP(ctx context.Context, nc net.Conn, c *conn, br *bufio.Reader, ev Event, t target) {
	var up *upstream
	defer func() { up.close() }()
	for n := 0; ; n++ {
		if n > 0 {
			c.head(-1, time.Now().Add(s.cfg.idle))
			if _, err := br.Peek(1); err != nil {
				return
			}
			ev = event(ProtoTransparent, nc)
			ev.Port = t.port
			c.head(-1, time.Now().Add(s.cfg.handshake))
		}
		req, err := readRequest(br)
		if err != nil {
			d := headDenial(err, c)
			d.host, d.port = t.name, t.port
			writeDenial(c, d)
			s.refuse(&ev, d)
			return
		}
		c.body(s.cfg.idle)
		if !s.forwardHTTP(ctx, c, br, req, &up, ev, &t) {
			return
		}
	}
}
