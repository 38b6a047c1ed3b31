package relay

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

func dnsHarness(t *testing.T, edit func(*Settings)) *harness {
	s := Settings{Mode: ModeAllowlist, Allow: []string{"allowed.test", "*.wild.test"}}
	if edit != nil {
		edit(&s)
	}
	return newHarness(t, s, harnessConfig{})
}

func TestDNSAnswers(t *testing.T) {
	tests := []struct {
		name    string
		qname   string
		qtype   dnsmessage.Type
		rcode   dnsmessage.RCode
		answers int
		verdict Verdict
		rule    string
	}{
		{"A for an allowed name", "allowed.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, Allow, "allowed.test"},
		{"A below a wildcard", "a.b.wild.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, Allow, "*.wild.test"},
		{"A, upper case and 0x20 mixed", "AlLoWeD.TeSt.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, Allow, "allowed.test"},
		{"AAAA is empty", "allowed.test.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, 0, Allow, "allowed.test"},
		{"HTTPS is empty", "allowed.test.", dnsmessage.TypeHTTPS, dnsmessage.RCodeSuccess, 0, Allow, "allowed.test"},
		{"SVCB is empty", "allowed.test.", dnsmessage.TypeSVCB, dnsmessage.RCodeSuccess, 0, Allow, "allowed.test"},
		{"TXT is refused", "allowed.test.", dnsmessage.TypeTXT, dnsmessage.RCodeRefused, 0, Deny, "dns-type"},
		{"SRV is refused", "allowed.test.", dnsmessage.TypeSRV, dnsmessage.RCodeRefused, 0, Deny, "dns-type"},
		{"an unlisted name is refused", "evil.test.", dnsmessage.TypeA, dnsmessage.RCodeRefused, 0, Deny, "no-rule"},
		{"the wildcard's apex is refused", "wild.test.", dnsmessage.TypeAAAA, dnsmessage.RCodeRefused, 0, Deny, "no-rule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := dnsHarness(t, nil)
			q := dnsQuery(t, tt.qname, tt.qtype, true)
			raw := h.udpExchange(q)
			m := unpack(t, raw)
			if m.RCode != tt.rcode || len(m.Answers) != tt.answers || !m.Response || m.ID != 0x4242 {
				t.Fatalf("got %v with %d answers (response %v, id %x), want %v with %d", m.RCode, len(m.Answers), m.Response, m.ID, tt.rcode, tt.answers)
			}
			if len(m.Questions) != 1 || m.Questions[0].Name.String() != tt.qname {
				t.Errorf("question echoed as %v, want %s exactly (0x20 case kept)", m.Questions, tt.qname)
			}
			if tt.answers == 1 {
				a := netip.AddrFrom4(m.Answers[0].Body.(*dnsmessage.AResource).A)
				if !netip.MustParsePrefix("127.77.0.0/16").Contains(a) || m.Answers[0].Header.TTL != dnsTTL {
					t.Errorf("answer %s TTL %d, want an address in 127.77.0.0/16 with TTL %d", a, m.Answers[0].Header.TTL, dnsTTL)
				}
			}
			code, text, ok := ede(m)
			if tt.rcode == dnsmessage.RCodeRefused && (!ok || code != edeBlocked || text == "") {
				t.Errorf("EDE %d %q %v, want Blocked with a reason", code, text, ok)
			}
			if tt.rule == "no-rule" && !strings.Contains(text, "network.allow") {
				t.Errorf("EDE text %q, want it to name the rule to add", text)
			}
			if tt.rcode == dnsmessage.RCodeSuccess && ok {
				t.Errorf("an answer carries EDE %d %q", code, text)
			}
			if len(raw) > dnsAmplification*len(q) {
				t.Errorf("answer of %d bytes to a query of %d: more than %dx", len(raw), len(q), dnsAmplification)
			}
			evs := h.waitEvents(1)
			if len(evs) != 1 || evs[0].Protocol != ProtoDNS || evs[0].Verdict != tt.verdict || evs[0].Rule != tt.rule || evs[0].QType != strings.TrimPrefix(tt.qtype.String(), "Type") {
				t.Errorf("events %+v, want one dns %s %s", evs, tt.verdict, tt.rule)
			}
			if h.res.total() != 0 {
				t.Errorf("the stub asked upstream")
			}
		})
	}
}

// One address per name, the same for the server's life.
func TestDNSStableAddresses(t *testing.T) {
	h := dnsHarness(t, nil)
	a1, b1 := h.resolveFake("a.wild.test"), h.resolveFake("b.wild.test")
	a2 := h.resolveFake("A.WILD.TEST")
	if a1 != a2 || a1 == b1 {
		t.Fatalf("a: %s then %s, b: %s; want a stable address per name, distinct names distinct", a1, a2, b1)
	}
	if st := h.srv.Stats(); st.DNSAnswered != 3 || st.DNSRefused != 0 {
		t.Errorf("stats %+v, want 3 answered", st)
	}
}

// A query without EDNS gets no OPT record back (RFC 6891 §7), and still
// REFUSED.
func TestDNSNoEDNS(t *testing.T) {
	h := dnsHarness(t, nil)
	m := unpack(t, h.udpExchange(dnsQuery(t, "evil.test.", dnsmessage.TypeA, false)))
	if m.RCode != dnsmessage.RCodeRefused || len(m.Additionals) != 0 {
		t.Fatalf("got %v with %d additionals, want REFUSED and no OPT", m.RCode, len(m.Additionals))
	}
}

func TestDNSMalformed(t *testing.T) {
	twoQ := func() []byte {
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 1})
		b.StartQuestions()
		b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("allowed.test."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
		b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("evil.test."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
		m, _ := b.Finish()
		return m
	}()
	notify := func() []byte {
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 1, OpCode: 4})
		b.StartQuestions()
		b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("allowed.test."), Type: dnsmessage.TypeSOA, Class: dnsmessage.ClassINET})
		m, _ := b.Finish()
		return m
	}()
	response := func() []byte {
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 1, Response: true})
		b.StartQuestions()
		b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("allowed.test."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
		m, _ := b.Finish()
		return m
	}()
	tests := []struct {
		name  string
		msg   []byte
		rcode dnsmessage.RCode
		none  bool // no answer at all
	}{
		{"two questions", twoQ, dnsmessage.RCodeFormatError, false},
		{"NOTIFY opcode", notify, dnsmessage.RCodeNotImplemented, false},
		{"a response, not a query", response, 0, true},
		{"shorter than a header", []byte{1, 2, 3}, 0, true},
		{"truncated question", []byte{0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7, 'a'}, dnsmessage.RCodeFormatError, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := dnsHarness(t, nil)
			raw := h.udpExchange(tt.msg)
			if tt.none {
				if raw != nil {
					t.Fatalf("got an answer of %d bytes, want none", len(raw))
				}
			} else if m := unpack(t, raw); m.RCode != tt.rcode || len(m.Answers) != 0 {
				t.Fatalf("got %v with %d answers, want %v", m.RCode, len(m.Answers), tt.rcode)
			}
			if evs := h.waitEvents(1); len(evs) != 1 || evs[0].Verdict != Deny {
				t.Errorf("events %+v, want one denial", evs)
			}
		})
	}
}

func TestDNSTCP(t *testing.T) {
	h := dnsHarness(t, nil)
	c, err := net.Dial("tcp4", h.dnsTCP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	for i, q := range []struct {
		name  string
		rcode dnsmessage.RCode
	}{{"allowed.test.", dnsmessage.RCodeSuccess}, {"evil.test.", dnsmessage.RCodeRefused}} {
		msg := dnsQuery(t, q.name, dnsmessage.TypeA, true)
		c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...))
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		b := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
		if m := unpack(t, b); m.RCode != q.rcode {
			t.Errorf("%s over TCP: %v, want %v", q.name, m.RCode, q.rcode)
		}
	}
	c.Close()
	if evs := h.waitEvents(2); len(evs) != 2 {
		t.Errorf("events %+v, want one per query", evs)
	}
	// A length past the bound ends the connection.
	c2, err := net.Dial("tcp4", h.dnsTCP)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.Write([]byte{0xff, 0xff})
	expectClosed(t, c2, 2*time.Second)
	if evs := h.waitEvents(3); len(evs) != 3 || evs[2].Rule != "bad-request" {
		t.Errorf("events %+v, want the oversized query refused", evs)
	}
}

// A /24 stub range holds 254 names (.1-.254); the next is refused, not wrapped
// around onto another name's address.
func TestDNSRangeFull(t *testing.T) {
	h := dnsHarness(t, func(s *Settings) { s.FakeRange = netip.MustParsePrefix("127.78.1.0/24") })
	seen := map[netip.Addr]bool{}
	for i := 0; i < 254; i++ {
		a := h.resolveFake(fmt.Sprintf("n%d.wild.test", i))
		if seen[a] || a == netip.MustParseAddr("127.78.1.0") || a == netip.MustParseAddr("127.78.1.255") {
			t.Fatalf("name %d got %s: reused, or the network or all-ones address", i, a)
		}
		seen[a] = true
	}
	m := unpack(t, h.udpExchange(dnsQuery(t, "full.wild.test.", dnsmessage.TypeA, true)))
	if code, _, _ := ede(m); m.RCode != dnsmessage.RCodeRefused || code != edeOther {
		t.Fatalf("255th name: %v EDE %d, want REFUSED with EDE Other", m.RCode, code)
	}
	if a := h.resolveFake("n0.wild.test"); !seen[a] {
		t.Errorf("a known name after the range filled got %s, want its old address", a)
	}
}
