package relay

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// origin is the test upstream: an HTTP and an HTTPS server on loopback
// (httptest's certificate is for example.com), and what they were asked.
type origin struct {
	http, https *httptest.Server
	hp, sp      uint16 // their ports
	pool        *x509.CertPool
	mu          sync.Mutex
	seen        []*http.Request
}

func newOrigin(t *testing.T) *origin {
	o := &origin{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.seen = append(o.seen, r)
		o.mu.Unlock()
		fmt.Fprintf(w, "hello %s %s %d", r.Method, r.URL.Path, len(body))
	})
	o.http = httptest.NewServer(handler)
	o.https = httptest.NewTLSServer(handler)
	t.Cleanup(o.http.Close)
	t.Cleanup(o.https.Close)
	o.hp = uint16(o.http.Listener.Addr().(*net.TCPAddr).Port)
	o.sp = uint16(o.https.Listener.Addr().(*net.TCPAddr).Port)
	o.pool = x509.NewCertPool()
	o.pool.AddCert(o.https.Certificate())
	return o
}

func (o *origin) last() *http.Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seen) == 0 {
		return nil
	}
	return o.seen[len(o.seen)-1]
}

// originSettings allow example.com on the origin's two ports; the name is
// an operator test host at 127.0.0.1, exempt from the deny set.
func originSettings(o *origin, mode Mode) Settings {
	return Settings{
		Mode:      mode,
		Allow:     []string{fmt.Sprintf("example.com:%d", o.hp), fmt.Sprintf("example.com:%d", o.sp)},
		TestHosts: map[string][]netip.Addr{"example.com": {netip.MustParseAddr("127.0.0.1")}},
		Exempt:    []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}
}

func get(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %q, want 200", u, resp.StatusCode, b)
	}
	return string(b)
}

// checkAllowed wants exactly one event, allowed by rule, through proto,
// to 127.0.0.1:port, with bytes both ways.
func checkAllowed(t *testing.T, evs []Event, proto Protocol, rule string, port uint16) Event {
	t.Helper()
	if len(evs) != 1 {
		t.Fatalf("got %d events, want 1: %+v", len(evs), evs)
	}
	e := evs[0]
	want := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)
	if e.Protocol != proto || e.Verdict != Allow || e.Rule != rule || e.Addr != want || e.Host != "example.com" || e.Port != port {
		t.Errorf("event %+v: want %s allowed by %s to %s", e, proto, rule, want)
	}
	if e.BytesUp == 0 || e.BytesDown == 0 || e.Duration <= 0 {
		t.Errorf("event %+v: want bytes both ways and a duration", e)
	}
	return e
}

func TestConnectHTTPS(t *testing.T) {
	for _, mode := range []Mode{ModeAllowlist, ModeStrict} {
		t.Run(string(mode), func(t *testing.T) {
			o := newOrigin(t)
			h := newHarness(t, originSettings(o, mode), harnessConfig{})
			tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: h.proxy}), TLSClientConfig: &tls.Config{RootCAs: o.pool}}
			c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
			if got := get(t, c, fmt.Sprintf("https://example.com:%d/a", o.sp)); got != "hello GET /a 0" {
				t.Errorf("body %q", got)
			}
			tr.CloseIdleConnections() // ends the tunnel, and so its event
			e := checkAllowed(t, h.waitEvents(1), ProtoConnect, fmt.Sprintf("example.com:%d", o.sp), o.sp)
			wantSNI := ""
			if mode == ModeStrict {
				wantSNI = "example.com" // read and checked at strict
			}
			if e.SNI != wantSNI {
				t.Errorf("SNI %q, want %q", e.SNI, wantSNI)
			}
			st := h.srv.Stats()
			if st.Allowed != 1 || st.Denied != 0 || st.BytesUp != uint64(e.BytesUp) || st.BytesDown != uint64(e.BytesDown) {
				t.Errorf("stats %+v, want 1 allowed and the event's bytes (%d up, %d down)", st, e.BytesUp, e.BytesDown)
			}
		})
	}
}

func TestAbsoluteFormHTTP(t *testing.T) {
	o := newOrigin(t)
	h := newHarness(t, originSettings(o, ModeAllowlist), harnessConfig{})
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: h.proxy})}, Timeout: 5 * time.Second}
	u := fmt.Sprintf("http://example.com:%d/path?q=1", o.hp)
	if got := get(t, c, u); got != "hello GET /path 0" {
		t.Errorf("body %q", got)
	}
	r := o.last()
	if r.RequestURI != "/path?q=1" || r.Host != fmt.Sprintf("example.com:%d", o.hp) {
		t.Errorf("origin saw %q Host %q, want origin-form /path?q=1 and Host example.com:%d", r.RequestURI, r.Host, o.hp)
	}
	for _, hop := range []string{"Proxy-Connection", "Proxy-Authorization"} {
		if r.Header.Get(hop) != "" {
			t.Errorf("origin got hop-by-hop %s", hop)
		}
	}
	resp, err := c.Post(u, "text/plain", strings.NewReader(strings.Repeat("x", 100000)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello POST /path 100000" {
		t.Errorf("POST body %q", b)
	}
	evs := h.waitEvents(2)
	if len(evs) != 2 {
		t.Fatalf("got %d events, want one per request: %+v", len(evs), evs)
	}
	for _, e := range evs {
		if e.Protocol != ProtoHTTP || e.Verdict != Allow || e.Addr.Port() != o.hp || e.BytesUp == 0 || e.BytesDown == 0 {
			t.Errorf("event %+v, want an allowed http request with bytes", e)
		}
	}
	if evs[1].BytesUp < 100000 {
		t.Errorf("POST event counts %d bytes up, want the body's 100000 and more", evs[1].BytesUp)
	}
}

// Every request on one keep-alive connection is decided on its own: an
// allowed one, then one for another host, on the same connection.
func TestKeepAliveEachRequestDecided(t *testing.T) {
	o := newOrigin(t)
	h := newHarness(t, originSettings(o, ModeAllowlist), harnessConfig{})
	c := h.dialProxy()
	br := bufio.NewReader(c)
	for i, host := range []string{fmt.Sprintf("example.com:%d", o.hp), fmt.Sprintf("example.com:%d", o.hp), "evil.test"} {
		fmt.Fprintf(c, "GET http://%s/%d HTTP/1.1\r\nHost: %s\r\n\r\n", host, i, host)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		want := 200
		if host == "evil.test" {
			want = 403
		}
		if resp.StatusCode != want {
			t.Errorf("request %d to %s: %d, want %d", i, host, resp.StatusCode, want)
		}
	}
	evs := h.waitEvents(3)
	if len(evs) != 3 || evs[0].Verdict != Allow || evs[1].Verdict != Allow || evs[2].Verdict != Deny || evs[2].Rule != "no-rule" {
		t.Fatalf("events %+v, want allow, allow, deny no-rule", evs)
	}
	if d := h.dials(); len(d) != 1 {
		t.Errorf("dialled %v, want one upstream connection reused for both allowed requests", d)
	}
}

func TestSOCKS5(t *testing.T) {
	o := newOrigin(t)
	h := newHarness(t, originSettings(o, ModeAllowlist), harnessConfig{})
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "socks5", Host: h.proxy}), TLSClientConfig: &tls.Config{RootCAs: o.pool}}
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	if got := get(t, c, fmt.Sprintf("https://example.com:%d/s", o.sp)); got != "hello GET /s 0" {
		t.Errorf("body %q", got)
	}
	tr.CloseIdleConnections()
	checkAllowed(t, h.waitEvents(1), ProtoSOCKS5, fmt.Sprintf("example.com:%d", o.sp), o.sp)
}

func TestTransparent(t *testing.T) {
	o := newOrigin(t)
	h := newHarness(t, originSettings(o, ModeStrict), harnessConfig{transparent: map[uint16]string{o.sp: "127.77.0.1:0", o.hp: "127.77.0.1:0"}})
	if a := h.resolveFake("example.com"); a != netip.MustParseAddr("127.77.0.1") {
		t.Fatalf("stub gave %s, want 127.77.0.1", a)
	}
	// TLS: a program that resolved example.com through the stub and
	// connected to its address on the HTTPS port.
	tr := &http.Transport{
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return tls.Dial("tcp4", h.trans[o.sp], &tls.Config{ServerName: "example.com", RootCAs: o.pool})
		},
	}
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	if got := get(t, c, fmt.Sprintf("https://example.com:%d/t", o.sp)); got != "hello GET /t 0" {
		t.Errorf("body %q", got)
	}
	tr.CloseIdleConnections()
	evs := h.waitEvents(2) // the DNS query, the connection
	if len(evs) != 2 || evs[0].Protocol != ProtoDNS {
		t.Fatalf("events %+v, want the query then the connection", evs)
	}
	e := checkAllowed(t, evs[1:], ProtoTransparent, fmt.Sprintf("example.com:%d", o.sp), o.sp)
	if e.SNI != "example.com" {
		t.Errorf("SNI %q, want example.com", e.SNI)
	}
	// Plain HTTP, origin-form, Host checked.
	tr2 := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return net.Dial("tcp4", h.trans[o.hp])
	}}
	c2 := &http.Client{Transport: tr2, Timeout: 5 * time.Second}
	if got := get(t, c2, fmt.Sprintf("http://example.com:%d/p", o.hp)); got != "hello GET /p 0" {
		t.Errorf("body %q", got)
	}
	tr2.CloseIdleConnections()
	evs = h.waitEvents(3)
	checkAllowed(t, evs[2:], ProtoTransparent, fmt.Sprintf("example.com:%d", o.hp), o.hp)
	if r := o.last(); r.Host != fmt.Sprintf("example.com:%d", o.hp) || r.RequestURI != "/p" {
		t.Errorf("origin saw %q Host %q", r.RequestURI, r.Host)
	}
}

// The Go resolver built from Settings.Resolvers asks the configured
// server, for the rooted name (no search domain), once per name.
func TestConfiguredResolver(t *testing.T) {
	dns := newFakeDNS(t, map[string]netip.Addr{"up.test.": netip.MustParseAddr("127.0.0.1")})
	up := newRawUpstream(t)
	s := Settings{
		Mode:      ModeAllowlist,
		Allow:     []string{fmt.Sprintf("up.test:%d", up.port)},
		Resolvers: []string{dns.addr},
		Exempt:    []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}
	h := newHarness(t, s, harnessConfig{realResolver: true})
	for i := 0; i < 2; i++ {
		c := h.dialProxy()
		fmt.Fprintf(c, "CONNECT up.test:%d HTTP/1.1\r\n\r\n", up.port)
		br := bufio.NewReader(c)
		if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		c.Write([]byte("ping"))
		b := make([]byte, 4)
		if _, err := io.ReadFull(br, b); err != nil || string(b) != "ping" {
			t.Fatalf("echo %q %v", b, err)
		}
		c.Close()
	}
	if q := dns.queries(); len(q) == 0 || q[0] != "up.test. A" && q[0] != "up.test. AAAA" {
		t.Fatalf("the resolver asked %v, want up.test. and nothing else", q)
	} else {
		for _, n := range q {
			if !strings.HasPrefix(n, "up.test. ") {
				t.Errorf("the resolver asked %q, want only up.test. (no search domain)", n)
			}
		}
		if len(q) > 2 {
			t.Errorf("the resolver asked %d times (%v), want one A and one AAAA: the answer is pinned", len(q), q)
		}
	}
}

// An upstream whose response head is past the bound gets the workload a
// 502, not a relay that buffers without end.
func TestUpstreamHeadTooLarge(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Pad: %s\r\nContent-Length: 0\r\n\r\n", strings.Repeat("a", 70<<10))
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	h := newHarness(t, bypassSettings(port), harnessConfig{})
	resp, body := h.roundTrip(fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", port, port))
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "larger than the limit") {
		t.Fatalf("got %d %q, want 502 saying the head is too large", resp.StatusCode, body)
	}
	if evs := h.waitEvents(1); len(evs) != 1 || evs[0].Verdict != Allow || !strings.Contains(evs[0].Reason, "read response") {
		t.Errorf("events %+v, want the allowed request with the upstream's failure", evs)
	}
}
