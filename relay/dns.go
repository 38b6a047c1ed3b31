package relay

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// The DNS stub's bounds. maxDNSMessage is the largest query read and
// answer sent (the DNS Flag Day 2020 EDNS size, RFC 9715); a UDP answer is
// also never more than dnsAmplification times its query, so the stub
// cannot be used to amplify. Answers carry dnsTTL: the addresses are
// stable, the policy's TTL is the server's life.
const (
	maxDNSMessage    = 1232
	dnsAmplification = 3
	dnsTTL           = 60
)

// Extended DNS Error info-codes (RFC 8914 §4).
const (
	edeOther   = 0
	edeBlocked = 15
)

// dnsAnswer is what the stub decided for one query.
type dnsAnswer struct {
	rcode   dnsmessage.RCode
	a       netip.Addr // the A record, when there is one
	edeCode uint16
	edeText string // when edeText != "", an EDE goes with the answer
}

// serveDNSUDP answers queries on pc, one at a time in this goroutine: each
// is decided from the policy alone, with no upstream query, so there is
// nothing to wait for.
func (s *Server) serveDNSUDP(ctx context.Context, pc net.PacketConn) error {
	buf := make([]byte, maxDNSMessage+1)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if isTemporary(err) {
				continue
			}
			return err
		}
		ev := Event{Time: time.Now(), Protocol: ProtoDNS, Client: from.String()}
		if n > maxDNSMessage {
			ev.Verdict, ev.Rule, ev.Reason = Deny, denyBadRequest, fmt.Sprintf("query larger than %d bytes: dropped", maxDNSMessage)
			s.done(&ev)
			continue
		}
		resp := s.answerDNS(buf[:n], true, &ev)
		if resp != nil {
			_, _ = pc.WriteTo(resp, from)
		}
		s.done(&ev)
	}
}

// serveDNSTCP answers queries on one TCP connection (RFC 7766): each
// length-prefixed, each read within the handshake timeout.
func (s *Server) serveDNSTCP(ctx context.Context, c net.Conn) {
	buf := make([]byte, maxDNSMessage)
	for n := 0; ; n++ {
		ev := event(ProtoDNS, c)
		c.SetReadDeadline(time.Now().Add(s.cfg.handshake))
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			if n > 0 && errors.Is(err, io.EOF) {
				return // closed between queries: no query, no event
			}
			ev.Verdict, ev.Rule, ev.Reason = Deny, denyBadRequest, fmt.Sprintf("read query: %v", err)
			if isTimeout(err) {
				ev.Rule = denyTimeout
			}
			s.done(&ev)
			return
		}
		size := int(binary.BigEndian.Uint16(l[:]))
		if size == 0 || size > maxDNSMessage {
			ev.Verdict, ev.Rule, ev.Reason = Deny, denyBadRequest, fmt.Sprintf("query of %d bytes: want 1-%d", size, maxDNSMessage)
			s.done(&ev)
			return
		}
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			ev.Verdict, ev.Rule, ev.Reason = Deny, denyBadRequest, fmt.Sprintf("read query: %v", err)
			s.done(&ev)
			return
		}
		resp := s.answerDNS(buf[:size], false, &ev)
		if resp != nil {
			out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
			c.SetWriteDeadline(time.Now().Add(s.cfg.handshake))
			if _, err := c.Write(append(out, resp...)); err != nil {
				ev.Reason = fmt.Sprintf("write answer: %v", err)
				s.done(&ev)
				return
			}
		}
		s.done(&ev)
		if resp == nil {
			return
		}
	}
}

// answerDNS decides one query and returns the answer to send (nil: send
// nothing), filling ev. Allowed names get an A record with their stub
// address; AAAA, HTTPS and SVCB for them get NOERROR with no records (the
// stub has no IPv6 range to give out, and an HTTPS record's ECH keys or
// alternative endpoints would only route around it), so clients use the A
// record. Everything else — a name no rule allows, TXT, MX, ANY, PTR, a
// class other than IN, another opcode — is REFUSED with an Extended DNS
// Error (Blocked, and the rule to add) when the query speaks EDNS. No query
// is ever sent upstream: a name the workload makes up never leaves the
// relay (no exfiltration over DNS).
func (s *Server) answerDNS(msg []byte, udp bool, ev *Event) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		ev.Verdict, ev.Rule, ev.Reason = Deny, denyBadRequest, fmt.Sprintf("dns: %v", err)
		return nil // no header to answer with
	}
	if h.Response {
		ev.Verdict, ev.Rule, ev.Reason = Deny, denyBadRequest, "dns: a response, not a query: dropped"
		return nil
	}
	// dnsmessage refuses a label holding a '.' (golang/go#56246), which
	// would otherwise print as two labels: "x.wild" + "test" as the
	// x.wild.test a wildcard allows.
	q, qerr := p.Question()
	if qerr == nil {
		if _, err := p.Question(); !errors.Is(err, dnsmessage.ErrSectionDone) {
			qerr = errors.New("more than one question")
		}
	}
	edns, size, eerr := optOf(&p, qerr)
	limit := 512
	if edns {
		limit = min(max(size, 512), maxDNSMessage)
	}
	if udp {
		limit = min(limit, dnsAmplification*len(msg))
	} else {
		limit = maxDNSMessage
	}
	ev.Verdict = Deny
	if qerr != nil || eerr != nil {
		err := qerr
		if err == nil {
			err = eerr
		}
		ev.Rule, ev.Reason = denyBadRequest, fmt.Sprintf("dns: %v", err)
		return buildDNS(h, nil, dnsAnswer{rcode: dnsmessage.RCodeFormatError}, edns, limit)
	}
	ev.QType = strings.TrimPrefix(q.Type.String(), "Type")
	ev.Host = strings.TrimSuffix(q.Name.String(), ".")
	ans := s.decideDNS(h, q, ev)
	if ans.rcode == dnsmessage.RCodeSuccess {
		ev.Verdict = Allow
		if ans.a.IsValid() {
			ev.Answers = []netip.Addr{ans.a}
		}
	}
	if !edns {
		ans.edeText = "" // RFC 6891 §7: no OPT record to a query without one
	}
	return buildDNS(h, &q, ans, edns, limit)
}

// decideDNS is the stub's policy for one well-formed query.
func (s *Server) decideDNS(h dnsmessage.Header, q dnsmessage.Question, ev *Event) dnsAnswer {
	refuse := func(id string, code uint16, format string, a ...any) dnsAnswer {
		ev.Rule, ev.Reason = id, fmt.Sprintf(format, a...)
		return dnsAnswer{rcode: dnsmessage.RCodeRefused, edeCode: code, edeText: ev.Reason}
	}
	if h.OpCode != 0 {
		ev.Rule, ev.Reason = denyBadRequest, fmt.Sprintf("opcode %d: only QUERY is served", h.OpCode)
		return dnsAnswer{rcode: dnsmessage.RCodeNotImplemented}
	}
	if q.Class != dnsmessage.ClassINET {
		return refuse(denyDNSType, edeBlocked, "class %s: only IN is answered", strings.TrimPrefix(q.Class.String(), "Class"))
	}
	name, err := NormalizeName(q.Name.String())
	if err != nil {
		return refuse(nameDenial(err), edeBlocked, "%v", err)
	}
	ev.Host = name
	r, ok := s.cfg.allowsName(name)
	if !ok {
		port := uint16(443)
		return refuse(denyNoRule, edeBlocked, "no rule allows %s: add %q to network.allow", name, suggestion(s.cfg.mode, name, port))
	}
	switch q.Type {
	case dnsmessage.TypeA:
		a, ok := s.fake.addr(name)
		if !ok {
			return refuse(denyLimit, edeOther, "the stub's address range %s is full", s.cfg.fakeRange)
		}
		ev.Rule = r.String()
		return dnsAnswer{rcode: dnsmessage.RCodeSuccess, a: a}
	case dnsmessage.TypeAAAA, dnsmessage.TypeHTTPS, dnsmessage.TypeSVCB:
		ev.Rule = r.String()
		return dnsAnswer{rcode: dnsmessage.RCodeSuccess}
	}
	return refuse(denyDNSType, edeBlocked, "%s records are not served (only A, and empty AAAA, HTTPS and SVCB)", strings.TrimPrefix(q.Type.String(), "Type"))
}

// optOf reads the query's OPT record, if any: whether it speaks EDNS and
// the UDP size it takes.
func optOf(p *dnsmessage.Parser, qerr error) (edns bool, size int, err error) {
	if qerr != nil {
		return false, 0, nil
	}
	if err := p.SkipAllAnswers(); err != nil {
		return false, 0, err
	}
	if err := p.SkipAllAuthorities(); err != nil {
		return false, 0, err
	}
	for {
		rh, err := p.AdditionalHeader()
		if errors.Is(err, dnsmessage.ErrSectionDone) {
			return edns, size, nil
		}
		if err != nil {
			return edns, size, err
		}
		if rh.Type == dnsmessage.TypeOPT {
			if edns {
				return edns, size, errors.New("more than one OPT record")
			}
			edns, size = true, int(rh.Class)
		}
		if err := p.SkipAdditional(); err != nil {
			return edns, size, err
		}
	}
}

// buildDNS packs an answer within limit bytes, shortening the EDE text if
// it must.
func buildDNS(qh dnsmessage.Header, q *dnsmessage.Question, ans dnsAnswer, edns bool, limit int) []byte {
	text := ans.edeText
	for {
		b, err := packDNS(qh, q, ans, edns, text)
		if err == nil && len(b) <= limit {
			return b
		}
		if err != nil || text == "" {
			// Cannot happen for a question under 255 bytes; answer
			// nothing rather than something malformed or too big.
			return nil
		}
		over := len(b) - limit
		text = text[:max(len(text)-over, 0)]
	}
}

func packDNS(qh dnsmessage.Header, q *dnsmessage.Question, ans dnsAnswer, edns bool, text string) ([]byte, error) {
	h := dnsmessage.Header{ID: qh.ID, Response: true, OpCode: qh.OpCode, RecursionDesired: qh.RecursionDesired, RecursionAvailable: true, RCode: ans.rcode}
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), h)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if q != nil {
		if err := b.Question(*q); err != nil {
			return nil, err
		}
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if ans.a.IsValid() && q != nil {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: dnsTTL}
		if err := b.AResource(rh, dnsmessage.AResource{A: ans.a.As4()}); err != nil {
			return nil, err
		}
	}
	if err := b.StartAdditionals(); err != nil {
		return nil, err
	}
	if edns {
		var rh dnsmessage.ResourceHeader
		if err := rh.SetEDNS0(maxDNSMessage, dnsmessage.RCodeSuccess, false); err != nil {
			return nil, err
		}
		var opts []dnsmessage.Option
		if ans.edeText != "" || ans.rcode == dnsmessage.RCodeRefused {
			data := binary.BigEndian.AppendUint16(nil, ans.edeCode)
			opts = append(opts, dnsmessage.Option{Code: 15, Data: append(data, text...)})
		}
		if err := b.OPTResource(rh, dnsmessage.OPTResource{Options: opts}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
