package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestServeErrors(t *testing.T) {
	cfg := mustConfig(t, Settings{Mode: ModeAllowlist, Allow: []string{"a.test"}})
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := NewServer(nil, Options{}).Serve(context.Background(), Listeners{Proxy: ln}); err == nil || !strings.Contains(err.Error(), "no config") {
		t.Errorf("Serve without a config = %v, want an error", err)
	}
	if err := NewServer(cfg, Options{}).Serve(context.Background(), Listeners{}); err == nil || !strings.Contains(err.Error(), "no listeners") {
		t.Errorf("Serve without listeners = %v, want an error", err)
	}
	s := NewServer(cfg, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx, Listeners{Proxy: ln}) }()
	time.Sleep(20 * time.Millisecond)
	if err := s.Serve(ctx, Listeners{Proxy: ln}); err == nil || !strings.Contains(err.Error(), "already served") {
		t.Errorf("a second Serve = %v, want an error", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel = %v, want nil", err)
	}
	if _, err := net.Dial("tcp4", ln.Addr().String()); err == nil {
		t.Errorf("the listener is still open after Serve returned")
	}
}

// failingListener fails its Accept with a permanent error.
type failingListener struct{ net.Listener }

func (failingListener) Accept() (net.Conn, error) { return nil, errors.New("broken listener") }

func TestServeListenerFails(t *testing.T) {
	cfg := mustConfig(t, Settings{Mode: ModeAllowlist, Allow: []string{"a.test"}})
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = NewServer(cfg, Options{}).Serve(context.Background(), Listeners{Proxy: failingListener{ln}})
	if err == nil || !strings.Contains(err.Error(), "relay serve proxy") || !strings.Contains(err.Error(), "broken listener") {
		t.Fatalf("Serve = %v, want the listener's error, naming it", err)
	}
}

// openTunnel opens a CONNECT tunnel to the echo upstream and proves it
// carries bytes.
func openTunnel(t testing.TB, h *harness, up *rawUpstream) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp4", h.proxy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\n\r\n", up.port)
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	c.Write([]byte("p"))
	if b, err := br.ReadByte(); err != nil || b != 'p' {
		t.Fatalf("echo: %q %v", b, err)
	}
	c.SetReadDeadline(time.Time{})
	return c, br
}

// When Serve returns, the tunnels are closed and the server's goroutines
// are gone (the teardown receipt's relay_stopped relies on it).
func TestServeStopsEverything(t *testing.T) {
	up := newRawUpstream(t)
	base := runtime.NumGoroutine()
	h := newHarness(t, bypassSettings(up.port), harnessConfig{})
	var conns []net.Conn
	for i := 0; i < 5; i++ {
		c, _ := openTunnel(t, h, up)
		conns = append(conns, c)
	}
	if n := runtime.NumGoroutine(); n < base+10 {
		t.Fatalf("%d goroutines with 5 tunnels open, base %d: the test measures nothing", n, base)
	}
	h.stop()
	for i, c := range conns {
		if b := expectClosed(t, c, 2*time.Second); len(b) != 0 {
			t.Errorf("tunnel %d got %q after stop", i, b)
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Serve returned, %d before it started:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
	if evs := h.waitEvents(5); len(evs) != 5 {
		t.Errorf("%d events, want one per tunnel", len(evs))
	}
}

func TestIdleTimeout(t *testing.T) {
	up := newRawUpstream(t)
	s := bypassSettings(up.port)
	s.IdleTimeout = 400 * time.Millisecond
	h := newHarness(t, s, harnessConfig{})

	idle, _ := openTunnel(t, h, up)
	start := time.Now()
	expectClosed(t, idle, 3*time.Second)
	if d := time.Since(start); d < 350*time.Millisecond || d > 1200*time.Millisecond {
		t.Errorf("an idle tunnel closed after %s, want about the 400ms idle timeout", d)
	}
	evs := h.waitEvents(1)
	if len(evs) != 1 || evs[0].Verdict != Allow || !strings.Contains(evs[0].Reason, "idle") {
		t.Fatalf("events %+v, want the tunnel's, ended as idle", evs)
	}

	// A tunnel that moves a byte every 100ms lives past the timeout, in
	// either direction.
	busy, br := openTunnel(t, h, up)
	for i := 0; i < 15; i++ {
		time.Sleep(100 * time.Millisecond)
		busy.SetDeadline(time.Now().Add(time.Second))
		if _, err := busy.Write([]byte("k")); err != nil {
			t.Fatalf("write after %s: %v", time.Duration(i)*100*time.Millisecond, err)
		}
		if _, err := br.ReadByte(); err != nil {
			t.Fatalf("read after %s: %v", time.Duration(i)*100*time.Millisecond, err)
		}
	}
}

// A client that is done sending half-closes; the upstream's answer still
// comes back.
func TestHalfClose(t *testing.T) {
	up := newRawUpstream(t)
	h := newHarness(t, bypassSettings(up.port), harnessConfig{})
	c, br := openTunnel(t, h, up)
	c.Write([]byte("last words"))
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(br)
	if err != nil || string(b) != "last words" {
		t.Fatalf("after CloseWrite got %q, %v; want the echo then EOF", b, err)
	}
	evs := h.waitEvents(1)
	if len(evs) != 1 || evs[0].BytesUp != int64(len("plast words")) || evs[0].BytesDown != int64(len("plast words")) {
		t.Fatalf("events %+v, want one with %d bytes each way", evs, len("plast words"))
	}
}

// The dialer's Control hook refuses an address other than the checked
// one, and one in the deny set, before connect(2).
func TestDialControl(t *testing.T) {
	up := newRawUpstream(t)
	h := newHarness(t, bypassSettings(up.port), harnessConfig{})
	want := netip.MustParseAddrPort("127.0.0.1:443")
	tests := []struct {
		address string
		err     string
	}{
		{"127.0.0.1:443", ""},
		{"[::ffff:127.0.0.1]:443", ""},
		{"127.0.0.1:444", "not the checked address"},
		{"127.0.0.2:443", "not the checked address"},
		{"example.com:443", "not the checked address"},
	}
	for _, tt := range tests {
		err := h.srv.checkDial(want, tt.address)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("checkDial(%s, %s) = %v, want %q", want, tt.address, err, tt.err)
		}
	}
	if err := h.srv.checkDial(netip.MustParseAddrPort("10.0.0.1:443"), "10.0.0.1:443"); err == nil || !strings.Contains(err.Error(), "deny set") {
		t.Errorf("checkDial of a denied address = %v, want the deny set", err)
	}
	// A decision that somehow holds a denied address is not dialled.
	_, _, err := h.srv.dial(context.Background(), decision{allow: true, port: 443, addrs: []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("169.254.169.254")}})
	if err == nil || !strings.Contains(err.Error(), "deny set") {
		t.Fatalf("dial = %v, want refused by the Control hook", err)
	}
	if d := h.dials(); len(d) != 0 {
		t.Errorf("the test dialer saw %v, want nothing: the relay's check runs first", d)
	}
}

func TestEventJSON(t *testing.T) {
	e := Event{
		Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Protocol: ProtoConnect, Host: "example.com", Port: 443,
		Answers: []netip.Addr{netip.MustParseAddr("192.0.2.1")}, Addr: netip.MustParseAddrPort("192.0.2.1:443"),
		Verdict: Allow, Rule: "example.com", BytesUp: 1, BytesDown: 2, Duration: time.Second,
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2026-01-02T03:04:05Z","protocol":"connect","host":"example.com","port":443,"answers":["192.0.2.1"],"addr":"192.0.2.1:443","verdict":"allow","rule":"example.com","bytes_up":1,"bytes_down":2,"duration_ns":1000000000}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(Event{Protocol: ProtoDNS, Verdict: Deny, Rule: "no-rule"})
	if strings.Contains(string(b), `"addr"`) {
		t.Errorf("%s: an event without an address has no addr", b)
	}
}

// An idle tunnel costs little: two goroutines (stacks start small) and
// the sockets; splice(2) holds its bytes in the kernel. Target: 64 KiB of
// Go memory per tunnel, measured with the client and upstream ends in the
// same process (they count against it).
func TestIdleTunnelMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 200 tunnels")
	}
	up := newRawUpstream(t)
	s := bypassSettings(up.port)
	s.MaxConns = 1000
	h := newHarness(t, s, harnessConfig{})
	openTunnel(t, h, up) // warm up pools
	const n = 200
	before := goMemory()
	for i := 0; i < n; i++ {
		openTunnel(t, h, up)
	}
	after := goMemory()
	per := (after - before) / n
	t.Logf("%d idle tunnels: %d bytes of Go heap and stack each (relay, client and upstream ends together)", n, per)
	if per > 64<<10 {
		t.Errorf("%d bytes per idle tunnel, want at most 64 KiB", per)
	}
}

func goMemory() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}
