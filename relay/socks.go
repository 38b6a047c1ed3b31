package relay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"syscall"
)

// SOCKS5 (RFC 1928) reply codes the relay sends.
const (
	socksOK             = 0x00
	socksNotAllowed     = 0x02 // connection not allowed by ruleset
	socksHostUnreach    = 0x04
	socksRefused        = 0x05
	socksCmdUnsupported = 0x07
	socksAddrUnsupp     = 0x08
)

// serveSOCKS5 serves the CONNECT subset of SOCKS5 with no authentication.
// The destination must be a name (ATYP 3): IPv4 and IPv6 literals (ATYP
// 1 and 4) are refused like IP literals everywhere else, with 0x02, so
// clients must resolve through the proxy (socks5h://). BIND and UDP
// ASSOCIATE get 0x07. The reply's bound address is 0.0.0.0:0: the host's
// addresses are none of the workload's business.
func (s *Server) serveSOCKS5(ctx context.Context, nc net.Conn, c *conn, br *bufio.Reader, ev Event) {
	ev.Protocol = ProtoSOCKS5
	reply := func(code byte) { _, _ = c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0}) }
	fail := func(err error) {
		d := denied("", 0, denySOCKS, fmt.Sprintf("socks5 handshake: %v", err))
		if isTimeout(err) {
			d.rule, d.reason = denyTimeout, "the SOCKS5 handshake did not arrive in time"
		}
		s.refuse(&ev, d)
	}
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		fail(err)
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		fail(err)
		return
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == 0
	}
	if !noAuth {
		_, _ = c.Write([]byte{5, 0xff})
		fail(errors.New("the client offers no method without authentication, the only one served"))
		return
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		fail(err)
		return
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil {
		fail(err)
		return
	}
	if req[0] != 5 {
		fail(fmt.Errorf("request version %d", req[0]))
		return
	}
	if req[1] != 1 {
		reply(socksCmdUnsupported)
		fail(fmt.Errorf("command %d: only CONNECT (1) is served", req[1]))
		return
	}
	var host string
	switch req[3] {
	case 1, 4:
		b := make([]byte, 4)
		if req[3] == 4 {
			b = make([]byte, 16)
		}
		var port [2]byte
		if _, err := io.ReadFull(br, b); err != nil {
			fail(err)
			return
		}
		if _, err := io.ReadFull(br, port[:]); err != nil {
			fail(err)
			return
		}
		a, _ := netip.AddrFromSlice(b)
		reply(socksNotAllowed)
		s.refuse(&ev, denied(a.String(), uint16(port[0])<<8|uint16(port[1]), denyIPLiteral,
			fmt.Sprintf("SOCKS5 to the address %s: rules name hosts; send the name (socks5h://)", a)))
		return
	case 3:
		n, err := br.ReadByte()
		if err == nil && n == 0 {
			err = errors.New("empty name")
		}
		if err != nil {
			fail(err)
			return
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			fail(err)
			return
		}
		host = string(b)
	default:
		reply(socksAddrUnsupp)
		fail(fmt.Errorf("address type %d", req[3]))
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		fail(err)
		return
	}
	d := s.decide(ctx, host, uint16(pb[0])<<8|uint16(pb[1]))
	if !d.allow {
		reply(socksNotAllowed)
		s.refuse(&ev, d)
		return
	}
	ev.fromDecision(d)
	up, addr, err := s.dial(ctx, d)
	if err != nil {
		code := byte(socksHostUnreach)
		if errors.Is(err, syscall.ECONNREFUSED) {
			code = socksRefused
		}
		reply(code)
		ev.Reason = err.Error()
		s.done(&ev)
		return
	}
	ev.Addr = addr
	if _, err := c.Write([]byte{5, socksOK, 0, 1, 0, 0, 0, 0, 0, 0}); err != nil {
		up.Close()
		ev.Reason = fmt.Sprintf("write reply: %v", err)
		s.done(&ev)
		return
	}
	c.raw()
	s.tunnel(ctx, nc, br, up, &ev, d.host, nil, true)
}
