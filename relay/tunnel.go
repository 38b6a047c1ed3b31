package relay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// serveConnect serves a CONNECT request: decide, dial, 200, tunnel.
func (s *Server) serveConnect(ctx context.Context, nc net.Conn, c *conn, br *bufio.Reader, req *http.Request, ev Event) {
	d := s.connectTarget(ctx, req)
	if !d.allow {
		writeDenial(c, d)
		s.refuse(&ev, d)
		return
	}
	ev.fromDecision(d)
	up, addr, err := s.dial(ctx, d)
	if err != nil {
		body := fmt.Sprintf("vetto-runtime relay: %v\n", err)
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		ev.Reason = err.Error()
		s.done(&ev)
		return
	}
	ev.Addr = addr
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		up.Close()
		ev.Reason = fmt.Sprintf("write 200: %v", err)
		s.done(&ev)
		return
	}
	c.raw()
	s.tunnel(ctx, nc, br, up, &ev, d.host, nil, true)
}

// connectTarget checks a CONNECT request's authority (host:port, port
// required) and Host header, and decides.
func (s *Server) connectTarget(ctx context.Context, req *http.Request) decision {
	auth := req.RequestURI
	if strings.HasPrefix(auth, "/") {
		return denied("", 0, denyBadRequest, fmt.Sprintf("CONNECT %q: want host:port", auth))
	}
	host, port, err := splitHostPort(auth, 0)
	if err != nil {
		return denied(auth, 0, nameDenial(err), err.Error())
	}
	if hh := req.Header["Host"]; len(hh) == 1 {
		// Optional on CONNECT, but when sent it must agree.
		h, p, err := splitHostPort(hh[0], port)
		hn, err1 := NormalizeName(h)
		tn, err2 := NormalizeName(host)
		if err == nil && err2 == nil && (err1 != nil || hn != tn || p != port) {
			return denied(tn, port, denyHostMismatch, fmt.Sprintf("Host header %q does not name %s:%d", hh[0], tn, port))
		}
		if err != nil {
			return denied(host, port, denyHostMismatch, fmt.Sprintf("Host header: %v", err))
		}
	}
	return s.decide(ctx, host, port)
}

// Directions of a tunnel.
const (
	dirUp   = 0 // workload → upstream
	dirDown = 1 // upstream → workload
)

// errIdle: neither side moved a byte for the idle timeout.
var errIdle = errors.New("idle")

// pipe is the copying state of one tunnel.
type pipe struct {
	s      *Server
	idle   time.Duration
	period time.Duration
	last   [2]atomic.Int64 // when each direction last moved bytes, unix ns

	mu    sync.Mutex
	cause error // why the tunnel ended early: the first direction to fail
}

// end ends both directions because one failed (or went idle); the other
// then fails on the closed sockets, which is not the cause.
func (p *pipe) end(err error, a, b net.Conn) {
	p.mu.Lock()
	if p.cause == nil {
		p.cause = err
	}
	p.mu.Unlock()
	a.Close()
	b.Close()
}

// copy moves bytes one way until EOF, an error, or idleness. It calls
// io.Copy on the bare connections, so two *net.TCPConn splice(2) in the
// kernel: no user-space buffer, and an idle tunnel costs its two
// goroutines and sockets. io.Copy cannot reset a deadline as bytes pass,
// so it runs a period (a quarter of the idle timeout) at a time: the read
// deadline ends each period, and a period in which neither direction moved
// anything for the idle timeout ends the tunnel. The write deadline is
// the idle timeout plus a period; a write that outlasts it has lost bytes
// inside the kernel pipe (splice drops them), so it ends the tunnel too.
func (p *pipe) copy(dir int, dst, src net.Conn) (int64, error) {
	var total int64
	for {
		start := time.Now()
		src.SetReadDeadline(start.Add(p.period))
		dst.SetWriteDeadline(start.Add(p.idle + p.period))
		n, err := io.Copy(dst, src)
		total += n
		if dir == dirUp {
			p.s.bytesUp.Add(uint64(n))
		} else {
			p.s.bytesDown.Add(uint64(n))
		}
		now := time.Now()
		if n > 0 {
			p.last[dir].Store(now.UnixNano())
		}
		switch {
		case err == nil:
			return total, nil
		case !isTimeout(err):
			return total, err
		case now.Sub(start) > p.idle:
			return total, fmt.Errorf("write stalled for %s", p.idle)
		case now.Sub(time.Unix(0, max(p.last[0].Load(), p.last[1].Load()))) >= p.idle:
			return total, errIdle
		}
	}
}

// tunnel copies between the client and the upstream until both are done,
// then emits ev. pre is what the client sent that the relay has read
// already (a ClientHello); it goes first. The upstream's bytes start flowing at once (protocols
// where the server speaks first); the client's reach the upstream only
// after the SNI gate passed, when checkSNI is set and gate asks for it.
func (s *Server) tunnel(ctx context.Context, client net.Conn, br *bufio.Reader, up net.Conn, ev *Event, name string, pre []byte, gate bool) {
	stop := context.AfterFunc(ctx, func() { up.Close() })
	defer stop()
	defer up.Close()
	p := &pipe{s: s, idle: s.cfg.idle, period: max(s.cfg.idle/4, 50*time.Millisecond)}
	now := time.Now().UnixNano()
	p.last[dirUp].Store(now)
	p.last[dirDown].Store(now)
	var down int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		down, err = p.copy(dirDown, client, up)
		if err == nil {
			closeWrite(client)
		} else {
			p.end(fmt.Errorf("upstream to workload: %w", err), client, up)
		}
	}()
	finish := func(upBytes int64) {
		<-done
		ev.BytesUp, ev.BytesDown = upBytes, down
		p.mu.Lock()
		if p.cause != nil && ev.Reason == "" && ev.Verdict == Allow {
			ev.Reason = p.cause.Error()
		}
		p.mu.Unlock()
		ev.Duration = time.Since(ev.Time)
		s.emit(*ev)
	}
	if gate && s.cfg.checkSNI {
		hello, sni, d := s.gateTLS(client, br, name)
		ev.SNI = sni
		if d != nil {
			ev.Verdict, ev.Rule, ev.Reason = Deny, d.rule, d.reason
			p.end(errors.New(d.reason), client, up)
			finish(0)
			return
		}
		pre = append(pre, hello...)
	}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		pre = append(pre, b...)
		_, _ = br.Discard(n)
	}
	if len(pre) > 0 {
		up.SetWriteDeadline(time.Now().Add(s.cfg.idle))
		if _, err := up.Write(pre); err != nil {
			p.end(fmt.Errorf("write to %s: %w", ev.Addr, err), client, up)
			finish(0)
			return
		}
		s.bytesUp.Add(uint64(len(pre)))
	}
	n, err := p.copy(dirUp, up, client)
	if err == nil {
		closeWrite(up)
	} else {
		p.end(fmt.Errorf("workload to upstream: %w", err), client, up)
	}
	finish(int64(len(pre)) + n)
}

// closeWrite half-closes a connection: the other side reads EOF while the
// opposite direction goes on.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	c.Close()
}

// gateTLS checks the ClientHello that opens a tunnel to name. At strict
// the tunnel must open with one, and its SNI must be name. At allowlist
// with CheckSNI, a stream that opens with a ClientHello must name name if
// it names anything; anything else passes. It returns the ClientHello's
// records to forward, the SNI, and a denial or nil.
func (s *Server) gateTLS(client net.Conn, br *bufio.Reader, name string) ([]byte, string, *decision) {
	deny := func(id, format string, a ...any) *decision {
		d := denied(name, 0, id, fmt.Sprintf(format, a...))
		return &d
	}
	defer client.SetReadDeadline(time.Time{})
	strict := s.cfg.mode == ModeStrict
	if !strict {
		client.SetReadDeadline(time.Now().Add(s.cfg.idle))
		if b, err := br.Peek(1); err != nil || b[0] != 0x16 {
			return nil, "", nil // not TLS, or nothing: not ours to judge at allowlist
		}
	}
	client.SetReadDeadline(time.Now().Add(s.cfg.handshake))
	hello, sni, err := readClientHello(br)
	switch {
	case err != nil && isTimeout(err):
		return nil, sni, deny(denyTimeout, "no TLS ClientHello within %s", s.cfg.handshake)
	case errors.Is(err, errNotTLS):
		return nil, sni, deny(denyNotTLS, "a tunnel at mode strict must open with a TLS ClientHello: %v", err)
	case err != nil:
		return nil, sni, deny(denyNotTLS, "TLS ClientHello: %v", err)
	case sni == "" && strict:
		return nil, sni, deny(denySNIMissing, "the TLS ClientHello has no server name; mode strict needs one that is %s", name)
	case sni == "":
		return hello, sni, nil
	}
	n, err := NormalizeName(sni)
	if err != nil || n != name {
		return nil, sni, deny(denySNIMismatch, "the TLS server name %q is not %s, the host the tunnel was opened to", sni, name)
	}
	return hello, sni, nil
}
