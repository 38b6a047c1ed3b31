package relay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"strings"
	"time"
)

// serveProxy serves one connection to the proxy port: the first byte
// tells SOCKS5 (0x05) from HTTP (a method's first letter).
func (s *Server) serveProxy(ctx context.Context, nc net.Conn) {
	ev := event(ProtoProxy, nc)
	c := &conn{Conn: nc}
	c.head(-1, time.Now().Add(s.cfg.handshake))
	br := bufio.NewReaderSize(c, headBuffer)
	b, err := br.Peek(1)
	switch {
	case err != nil:
		s.refuse(&ev, headDenial(err, c))
	case b[0] == 0x05:
		s.serveSOCKS5(ctx, nc, c, br, ev)
	case b[0] >= 'A' && b[0] <= 'Z':
		s.serveHTTPProxy(ctx, nc, c, br, ev)
	case b[0] == 0x04:
		s.refuse(&ev, denied("", 0, denySOCKS, "SOCKS4 is not served: use SOCKS5 (socks5h://)"))
	case b[0] == 0x16:
		s.refuse(&ev, denied("", 0, denyBadRequest, "a TLS handshake on the proxy port: the proxy speaks plain HTTP, so write http://, not https://, in the proxy URL"))
	default:
		s.refuse(&ev, denied("", 0, denyBadRequest, fmt.Sprintf("first byte 0x%02x is neither HTTP nor SOCKS5", b[0])))
	}
}

// refuse ends an event with a denial and emits it.
func (s *Server) refuse(ev *Event, d decision) {
	ev.fromDecision(d)
	ev.Verdict = Deny
	if ev.Reason == "" {
		ev.Reason = d.reason
	}
	ev.Duration = time.Since(ev.Time)
	s.emit(*ev)
}

// done emits an event as it is, with its duration.
func (s *Server) done(ev *Event) {
	ev.Duration = time.Since(ev.Time)
	s.emit(*ev)
}

// headBuffer is the size of the bufio.Reader a client's requests are read
// through: readRequest needs a whole head in it.
const headBuffer = maxHeaderBytes + 512

// readRequest reads one request with http.ReadRequest, and puts back the
// Host header, which ReadRequest deletes: through a proxy the Host header
// and the URI's authority are two claims, and the relay must see both to
// refuse a request whose Host names another host than its URI (the
// origin would route by the header). The head is peeked first and its
// Host fields read with textproto, the parser ReadRequest itself uses, so
// the two cannot read the head differently. br must be at least
// headBuffer bytes.
func readRequest(br *bufio.Reader) (*http.Request, error) {
	head, err := peekHead(br)
	if err != nil {
		return nil, err
	}
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	if _, err := tp.ReadLine(); err != nil {
		return nil, err
	}
	mh, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, err
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	if hosts := mh.Values("Host"); len(hosts) > 0 {
		req.Header["Host"] = hosts
	}
	return req, nil
}

// peekHead returns the request head, up to and with the blank line that
// ends it, without consuming it; errHeadTooLarge when maxHeaderBytes hold
// no blank line.
func peekHead(br *bufio.Reader) ([]byte, error) {
	n, from := 1, 0
	for {
		n = max(n, br.Buffered()) // look at all there is before waiting for more
		b, err := br.Peek(n)
		if end := headEnd(b, from); end >= 0 {
			return b[:end], nil
		}
		switch {
		case len(b) >= maxHeaderBytes, errors.Is(err, bufio.ErrBufferFull):
			return nil, errHeadTooLarge
		case err != nil:
			return nil, err
		}
		from = max(len(b)-2, 0)
		n = len(b) + 1 // one more than there is: wait for it
	}
}

// headEnd finds the blank line ("\n\n" or "\n\r\n", as textproto reads
// lines) at or after from, and returns the offset just past it, or -1.
func headEnd(b []byte, from int) int {
	for i := from; i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		if i+1 < len(b) && b[i+1] == '\n' {
			return i + 2
		}
		if i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n' {
			return i + 3
		}
	}
	return -1
}

// headDenial names why a head could not be read.
func headDenial(err error, c *conn) decision {
	switch {
	case c.overspent || errors.Is(err, errHeadTooLarge):
		return denied("", 0, denyHeaderTooLarge, fmt.Sprintf("request head larger than %d bytes", maxHeaderBytes))
	case isTimeout(err):
		return denied("", 0, denyTimeout, "the request did not arrive in time")
	case errors.Is(err, io.EOF):
		return denied("", 0, denyBadRequest, "closed before a request")
	}
	return denied("", 0, denyBadRequest, fmt.Sprintf("read request: %v", err))
}

// statusFor is the HTTP status a denial gets.
func statusFor(id string) int {
	switch id {
	case denyBadRequest, denyBadName, denyHostMismatch, denyUserinfo:
		return http.StatusBadRequest
	case denyHeaderTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge
	case denyTimeout:
		return http.StatusRequestTimeout
	case denyMethod:
		return http.StatusMethodNotAllowed
	}
	return http.StatusForbidden
}

// writeDenial answers a refused request: the status, X-Vetto-Deny with
// the denial id, and a body that says which policy line would allow it.
func writeDenial(w io.Writer, d decision) {
	var b strings.Builder
	fmt.Fprintf(&b, "vetto-runtime relay refused this request (%s): %s\n", d.rule, d.reason)
	switch {
	case d.suggest != "":
		fmt.Fprintf(&b, "To allow it, add %q to network.allow in the policy.\n", d.suggest)
	case strings.HasPrefix(d.rule, "deny-set:"):
		b.WriteString("The address is in the relay's deny set, which no policy can lift.\n")
	}
	status := statusFor(d.rule)
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nX-Vetto-Deny: %s\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), b.Len(), d.rule, b.String())
}

// serveHTTPProxy serves HTTP on the proxy port: CONNECT, which turns the
// connection into a tunnel, or absolute-form requests, each decided on its
// own, on one keep-alive connection.
func (s *Server) serveHTTPProxy(ctx context.Context, nc net.Conn, c *conn, br *bufio.Reader, ev Event) {
	var up *upstream
	defer func() { up.close() }()
	for n := 0; ; n++ {
		ev.Protocol = ProtoHTTP
		if n > 0 {
			// Between requests: wait up to the idle timeout for the next
			// one; a connection closed or idle here made no request, so
			// it has no event of its own.
			c.head(-1, time.Now().Add(s.cfg.idle))
			if _, err := br.Peek(1); err != nil {
				return
			}
			ev = event(ProtoHTTP, nc)
			c.head(-1, time.Now().Add(s.cfg.handshake))
		}
		req, err := readRequest(br)
		if err != nil {
			d := headDenial(err, c)
			writeDenial(c, d)
			s.refuse(&ev, d)
			return
		}
		c.body(s.cfg.idle)
		if req.Method == http.MethodConnect {
			ev.Protocol = ProtoConnect
			s.serveConnect(ctx, nc, c, br, req, ev)
			return
		}
		if !s.forwardHTTP(ctx, c, br, req, &up, ev, nil) {
			return
		}
	}
}

// target is the fixed destination of a transparent connection.
type target struct {
	name string
	port uint16
}

// hopHeaders are hop-by-hop (RFC 9110 §7.6.1): the relay's connection to
// the client is not the client's connection to the origin. Upgrade goes
// with them: the relay forwards HTTP, not the protocols it upgrades to.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHop(h http.Header) {
	for _, f := range h["Connection"] {
		for _, name := range strings.Split(f, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// requestTarget checks a request's target and Host header and returns the
// host and port to decide on. Through the proxy (fixed == nil) the target
// is absolute-form http://host[:port]/path without userinfo; on a
// transparent port it is origin-form and the host is the one the stub's
// address stands for. Either way the Host header must name the same host
// and port.
func requestTarget(req *http.Request, fixed *target) (host string, port uint16, d decision, ok bool) {
	if req.Method == "TRACE" || req.Method == "TRACK" {
		return "", 0, denied("", 0, denyMethod, fmt.Sprintf("method %s is refused: it echoes the request, headers and all", req.Method)), false
	}
	hh := req.Header["Host"]
	if fixed != nil {
		if !strings.HasPrefix(req.RequestURI, "/") {
			return "", 0, denied(fixed.name, fixed.port, denyBadRequest, fmt.Sprintf("request target %q: want origin-form (/path) on a transparent port", req.RequestURI)), false
		}
		host, port = fixed.name, fixed.port
	} else {
		u := req.RequestURI
		scheme, rest, found := strings.Cut(u, "://")
		if !found || !req.URL.IsAbs() {
			return "", 0, denied("", 0, denyBadRequest, fmt.Sprintf("request target %q: this is a proxy: send absolute-form (GET http://host/path)", u)), false
		}
		if !strings.EqualFold(scheme, "http") {
			return "", 0, denied("", 0, denyBadRequest, fmt.Sprintf("request target %q: only http:// is forwarded; use CONNECT for https", u)), false
		}
		auth := rest
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			auth = rest[:i]
		}
		if strings.Contains(auth, "@") || req.URL.User != nil {
			return "", 0, denied(auth, 0, denyUserinfo, fmt.Sprintf("request target %q carries userinfo", u)), false
		}
		h, p, err := splitHostPort(auth, 80)
		if err != nil {
			return "", 0, denied(auth, 0, nameDenial(err), err.Error()), false
		}
		host, port = h, p
	}
	if len(hh) != 1 {
		return "", 0, denied(host, port, denyHostMismatch, "no Host header"), false
	}
	h, p, err := splitHostPort(hh[0], port)
	if err != nil {
		return "", 0, denied(hh[0], port, denyHostMismatch, fmt.Sprintf("Host header: %v", err)), false
	}
	hn, err1 := NormalizeName(h)
	tn, err2 := NormalizeName(host)
	if err2 != nil {
		return "", 0, denied(host, port, nameDenial(err2), err2.Error()), false
	}
	if err1 != nil || hn != tn || p != port {
		return "", 0, denied(tn, port, denyHostMismatch, fmt.Sprintf("Host header %q does not name %s:%d", hh[0], tn, port)), false
	}
	return tn, port, decision{}, true
}

// upstream is an HTTP origin connection, kept across the requests of one
// client connection while they go to the same host and port (and, for a
// credential's host, over TLS).
type upstream struct {
	name string
	port uint16 // the port dialled
	tls  bool   // a credential's TLS connection
	addr netip.AddrPort
	c    *conn
	br   *bufio.Reader
	stop func() bool // the context.AfterFunc that closes it with the server
}

func (u *upstream) close() {
	if u != nil {
		u.stop()
		u.c.Close()
	}
}

// forwardHTTP decides one request and, if allowed, forwards it in
// origin-form and copies the response back. It emits the request's event
// and reports whether the client connection may carry another request.
func (s *Server) forwardHTTP(ctx context.Context, c *conn, br *bufio.Reader, req *http.Request, up **upstream, ev Event, fixed *target) bool {
	host, port, d, ok := requestTarget(req, fixed)
	var cred *credential
	if ok {
		// A host with a credential is reached over TLS on the
		// credential's port, so that is what is decided and dialled.
		if cred = s.cfg.credentialFor(host, port); cred != nil {
			d = s.decide(ctx, host, cred.port)
		} else {
			d = s.decide(ctx, host, port)
		}
	}
	if !d.allow {
		writeDenial(c, d)
		s.refuse(&ev, d)
		return false
	}
	ev.fromDecision(d)
	u := *up
	var in0, out0 int64
	// finish emits the request's event; with a status, the client gets
	// that error response and the connection ends.
	finish := func(status int, err error) {
		if err != nil {
			ev.Reason = err.Error()
		}
		if status != 0 {
			body := fmt.Sprintf("vetto-runtime relay: %v\n", err)
			fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", status, http.StatusText(status), len(body), body)
		}
		if u != nil {
			ev.BytesUp, ev.BytesDown = u.c.out-out0, u.c.in-in0
			s.bytesUp.Add(uint64(ev.BytesUp))
			s.bytesDown.Add(uint64(ev.BytesDown))
		}
		ev.Duration = time.Since(ev.Time)
		s.emit(ev)
	}
	if u != nil && (u.name != d.host || u.port != d.port || u.tls != (cred != nil) || !containsAddr(d.addrs, u.addr.Addr())) {
		u.close()
		u, *up = nil, nil
	}
	if u == nil {
		tc, addr, err := s.dial(ctx, d)
		if err != nil {
			finish(http.StatusBadGateway, err)
			return false
		}
		var nc net.Conn = tc
		if cred != nil {
			tlsc, err := s.tlsUpstream(ctx, tc, cred)
			if err != nil {
				tc.Close()
				finish(http.StatusBadGateway, fmt.Errorf("TLS to %s (%s): %w", addr, d.host, err))
				return false
			}
			nc = tlsc
		}
		uc := &conn{Conn: nc}
		uc.body(s.cfg.idle)
		u = &upstream{name: d.host, port: d.port, tls: cred != nil, addr: addr, c: uc, br: bufio.NewReaderSize(uc, 4096),
			stop: context.AfterFunc(ctx, func() { tc.Close() })}
		*up = u
	}
	ev.Addr = u.addr
	in0, out0 = u.c.in, u.c.out

	if exp := req.Header.Get("Expect"); strings.EqualFold(exp, "100-continue") {
		// The client waits for 100 before it sends the body. The relay
		// has decided, so it says 100 itself and sends the origin a plain
		// request (an origin's 100 would have to be relayed while the
		// body is being written).
		_, _ = io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
		req.Header.Del("Expect")
	} else if exp != "" {
		finish(http.StatusExpectationFailed, fmt.Errorf("expect %q: not supported", exp))
		return false
	}
	removeHop(req.Header)
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // else Request.Write adds Go's
	}
	req.Host = d.host
	switch {
	case cred != nil:
		// After removeHop, so that a Connection header naming it cannot
		// take it out again.
		setCredential(req, cred)
		if cred.port != DefaultCredentialPort {
			req.Host = fmt.Sprintf("%s:%d", d.host, cred.port)
		}
	case port != 80:
		req.Host = fmt.Sprintf("%s:%d", d.host, port)
	}
	bw := bufio.NewWriterSize(u.c, 4096)
	werr := req.Write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	if werr != nil {
		finish(http.StatusBadGateway, fmt.Errorf("write request to %s: %w", u.addr, werr))
		return false
	}
	if cred != nil {
		ev.Credential = cred.header
		s.credentialed.Add(1)
	}
	var resp *http.Response
	for resp == nil {
		u.c.head(4*maxHeaderBytes, time.Now().Add(s.cfg.idle))
		r, err := http.ReadResponse(u.br, req)
		u.c.body(s.cfg.idle)
		switch {
		case err != nil:
			finish(http.StatusBadGateway, fmt.Errorf("read response from %s: %w", u.addr, err))
			return false
		case r.StatusCode == http.StatusSwitchingProtocols:
			finish(http.StatusBadGateway, fmt.Errorf("response from %s: 101 to a request without Upgrade", u.addr))
			return false
		case r.StatusCode < 200:
			// 1xx (103 Early Hints) is passed on; the final response
			// follows.
			removeHop(r.Header)
			fmt.Fprintf(c, "HTTP/1.1 %s\r\n", r.Status)
			_ = r.Header.Write(c)
			_, _ = io.WriteString(c, "\r\n")
		default:
			resp = r
		}
	}
	removeHop(resp.Header)
	cw := bufio.NewWriterSize(c, 4096)
	err := resp.Write(cw)
	if err == nil {
		err = cw.Flush()
	}
	resp.Body.Close()
	if err != nil {
		finish(0, fmt.Errorf("copy response from %s: %w", u.addr, err))
		return false
	}
	keep := !req.Close && !resp.Close
	if resp.Close {
		u.close()
		*up = nil
	}
	finish(0, nil)
	return keep
}

func containsAddr(as []netip.Addr, a netip.Addr) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}
