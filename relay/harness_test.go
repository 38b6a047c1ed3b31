package relay

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeResolver answers from a table: each lookup of a name takes the
// next answer of its list (the last one repeats), so a test can play a
// name that changes its answer (rebinding). Unknown names are NXDOMAIN.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr // by name without the root dot
	calls   map[string]int            // by the name as asked
}

func newFakeResolver(answers map[string][][]netip.Addr) *fakeResolver {
	return &fakeResolver{answers: answers, calls: map[string]int{}}
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.calls[host]
	f.calls[host]++
	seq := f.answers[strings.TrimSuffix(host, ".")]
	if len(seq) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return seq[min(n, len(seq)-1)], nil
}

func (f *fakeResolver) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

// rawUpstream is a TCP server on loopback that counts connections and the
// bytes it receives, and echoes them.
type rawUpstream struct {
	ln    net.Listener
	port  uint16
	mu    sync.Mutex
	conns int
	bytes int
}

func newRawUpstream(t testing.TB) *rawUpstream {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &rawUpstream{ln: ln, port: uint16(ln.Addr().(*net.TCPAddr).Port)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns++
			u.mu.Unlock()
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					u.mu.Lock()
					u.bytes += n
					u.mu.Unlock()
					if n > 0 {
						c.Write(buf[:n])
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return u
}

func (u *rawUpstream) received() (conns, bytes int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.conns, u.bytes
}

// harness runs a Server on loopback listeners with a fake resolver and a
// test dialer that lets the relay connect to loopback only: an address
// anywhere else that reaches it is a bug in the relay's checks, recorded
// and never connected to.
type harness struct {
	t      testing.TB
	srv    *Server
	res    *fakeResolver
	proxy  string
	dnsUDP string
	dnsTCP string
	trans  map[uint16]string // transparent port → listener address

	mu     sync.Mutex
	events []Event
	dialed []string
	strays []string

	cancel context.CancelFunc
	done   chan error
}

// harnessConfig is what a test may set besides the Settings.
type harnessConfig struct {
	resolve     map[string][][]netip.Addr
	transparent map[uint16]string // port → address to listen on
	resolver    Resolver          // instead of the fake one
	// realResolver: no Options.Resolver, so the server builds its own
	// from Settings.Resolvers.
	realResolver bool
}

func newHarness(t testing.TB, s Settings, hc harnessConfig) *harness {
	t.Helper()
	cfg, err := NewConfig(s)
	if err != nil {
		t.Fatalf("NewConfig: %v", err)
	}
	h := &harness{t: t, res: newFakeResolver(hc.resolve), trans: map[uint16]string{}, done: make(chan error, 1)}
	var res Resolver = h.res
	if hc.resolver != nil {
		res = hc.resolver
	}
	if hc.realResolver {
		res = nil
	}
	dialer := &net.Dialer{Control: func(network, address string, _ syscall.RawConn) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !ap.Addr().Unmap().IsLoopback() {
			h.strays = append(h.strays, address)
			return fmt.Errorf("test dialer: %s is not loopback", address)
		}
		h.dialed = append(h.dialed, address)
		return nil
	}}
	h.srv = NewServer(cfg, Options{
		Audit: func(e Event) {
			h.mu.Lock()
			h.events = append(h.events, e)
			h.mu.Unlock()
		},
		Resolver: res,
		Dialer:   dialer,
	})
	listen := func(addr string) net.Listener {
		ln, err := net.Listen("tcp4", addr)
		if err != nil {
			t.Fatalf("listen %s: %v", addr, err)
		}
		return ln
	}
	ls := Listeners{Proxy: listen("127.0.0.1:0"), DNSTCP: listen("127.0.0.1:0"), Transparent: map[uint16]net.Listener{}}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ls.DNSUDP = pc
	for port, addr := range hc.transparent {
		ln := listen(addr)
		ls.Transparent[port] = ln
		h.trans[port] = ln.Addr().String()
	}
	h.proxy, h.dnsTCP, h.dnsUDP = ls.Proxy.Addr().String(), ls.DNSTCP.Addr().String(), pc.LocalAddr().String()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.srv.Serve(ctx, ls) }()
	t.Cleanup(h.stop)
	return h
}

// stop ends Serve and checks it returned, cleanly, and that no dial went
// anywhere but loopback.
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Serve = %v, want nil after cancel", err)
		}
	case <-time.After(10 * time.Second):
		h.t.Errorf("Serve did not return 10s after cancel")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.strays) > 0 {
		h.t.Errorf("the relay tried to dial non-loopback addresses: %v", h.strays)
	}
}

// waitEvents waits until n events arrived, then a little longer, and
// returns them all: a test that wants exactly n compares the length.
func (h *harness) waitEvents(n int) []Event {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		got := len(h.events)
		h.mu.Unlock()
		if got >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.events...)
}

func (h *harness) dials() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.dialed...)
}

// dialProxy connects to the proxy port with a deadline on everything.
func (h *harness) dialProxy() net.Conn {
	h.t.Helper()
	c, err := net.Dial("tcp4", h.proxy)
	if err != nil {
		h.t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	h.t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends raw bytes to the proxy port and reads one HTTP response.
func (h *harness) roundTrip(raw string) (*http.Response, []byte) {
	h.t.Helper()
	c := h.dialProxy()
	if _, err := io.WriteString(c, raw); err != nil {
		h.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		h.t.Fatalf("read response to %q: %v", firstLine(raw), err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func firstLine(s string) string {
	if i := strings.Index(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// socks does a SOCKS5 no-auth handshake and CONNECT request, and returns
// the reply code and the connection.
func (h *harness) socks(atyp byte, addr []byte, port uint16) (byte, net.Conn) {
	h.t.Helper()
	c := h.dialProxy()
	if _, err := c.Write([]byte{5, 1, 0}); err != nil {
		h.t.Fatal(err)
	}
	var sel [2]byte
	if _, err := io.ReadFull(c, sel[:]); err != nil || sel != [2]byte{5, 0} {
		h.t.Fatalf("socks method selection = %v, %v; want 05 00", sel, err)
	}
	req := []byte{5, 1, 0, atyp}
	if atyp == 3 {
		req = append(req, byte(len(addr)))
	}
	req = append(append(req, addr...), byte(port>>8), byte(port))
	if _, err := c.Write(req); err != nil {
		h.t.Fatal(err)
	}
	var rep [10]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		h.t.Fatalf("socks reply: %v", err)
	}
	return rep[1], c
}

// dnsQuery builds a query for name and type, with an OPT record when
// edns is set.
func dnsQuery(t testing.TB, name string, typ dnsmessage.Type, edns bool) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 0x4242, RecursionDesired: true})
	b.StartQuestions()
	if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}); err != nil {
		t.Fatal(err)
	}
	if edns {
		b.StartAdditionals()
		var rh dnsmessage.ResourceHeader
		rh.SetEDNS0(1232, dnsmessage.RCodeSuccess, false)
		b.OPTResource(rh, dnsmessage.OPTResource{})
	}
	msg, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// udpExchange sends one datagram to the stub and returns the answer, or
// nil when none came.
func (h *harness) udpExchange(msg []byte) []byte {
	h.t.Helper()
	c, err := net.Dial("udp4", h.dnsUDP)
	if err != nil {
		h.t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write(msg); err != nil {
		h.t.Fatal(err)
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

func unpack(t testing.TB, b []byte) dnsmessage.Message {
	t.Helper()
	var m dnsmessage.Message
	if err := m.Unpack(b); err != nil {
		t.Fatalf("unpack answer: %v", err)
	}
	return m
}

// ede returns the Extended DNS Error of an answer: its code and text.
func ede(m dnsmessage.Message) (uint16, string, bool) {
	for _, r := range m.Additionals {
		opt, ok := r.Body.(*dnsmessage.OPTResource)
		if !ok {
			continue
		}
		for _, o := range opt.Options {
			if o.Code == 15 && len(o.Data) >= 2 {
				return uint16(o.Data[0])<<8 | uint16(o.Data[1]), string(o.Data[2:]), true
			}
		}
	}
	return 0, "", false
}

// resolveFake asks the stub for name's A record and returns the address.
func (h *harness) resolveFake(name string) netip.Addr {
	h.t.Helper()
	m := unpack(h.t, h.udpExchange(dnsQuery(h.t, name+".", dnsmessage.TypeA, false)))
	if m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 1 {
		h.t.Fatalf("stub A %s = %v with %d answers, want one", name, m.RCode, len(m.Answers))
	}
	return netip.AddrFrom4(m.Answers[0].Body.(*dnsmessage.AResource).A)
}

// clientHello returns the first TLS record(s) crypto/tls sends for
// serverName ("" sends no SNI).
func clientHello(t testing.TB, serverName string) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer b.Close()
	go func() {
		tc := tls.Client(a, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
		tc.Handshake()
		a.Close()
	}()
	b.SetDeadline(time.Now().Add(5 * time.Second))
	var hdr [5]byte
	if _, err := io.ReadFull(b, hdr[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(b, body); err != nil {
		t.Fatal(err)
	}
	return append(hdr[:], body...)
}

// expectClosed reads until the peer closes and fails if that takes more
// than d; it returns what was read.
func expectClosed(t testing.TB, c net.Conn, d time.Duration) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("want the relay to close the connection within %s: %v", d, err)
	}
	return b
}

// fakeDNS is an upstream DNS server on loopback: A records from a table,
// NOERROR without records for the rest, and a log of what it was asked.
type fakeDNS struct {
	addr string
	mu   sync.Mutex
	log  []string
}

func newFakeDNS(t testing.TB, a map[string]netip.Addr) *fakeDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	f := &fakeDNS{addr: pc.LocalAddr().String()}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var m dnsmessage.Message
			if m.Unpack(buf[:n]) != nil || len(m.Questions) != 1 {
				continue
			}
			q := m.Questions[0]
			f.mu.Lock()
			f.log = append(f.log, q.Name.String()+" "+strings.TrimPrefix(q.Type.String(), "Type"))
			f.mu.Unlock()
			m.Header.Response, m.Header.RecursionAvailable = true, true
			m.Additionals = nil
			if addr, ok := a[q.Name.String()]; ok && q.Type == dnsmessage.TypeA {
				m.Answers = []dnsmessage.Resource{{Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 0}, Body: &dnsmessage.AResource{A: addr.As4()}}}
			} else if !ok {
				m.Header.RCode = dnsmessage.RCodeNameError
			}
			out, err := m.Pack()
			if err == nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	return f
}

func (f *fakeDNS) queries() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}
