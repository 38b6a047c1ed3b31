// relayprobe is a static test program the relay tests run inside a
// network-allowlist container: the attacks of the bypass matrix
// (relay_bypass_test.go), each made exactly as the case says, reporting
// what came back. It judges nothing; the test does, from the host.
//
//	relayprobe <cases.json>     one JSON result per case on stdout, in order
//
// Every connection to the relay is made from the local port the case
// names, so the test can find the relay's audit event for it by the
// client address.
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Case is one attack or control.
type Case struct {
	Name string `json:"name"`
	// Kind: "http" (raw bytes to Addr, read an HTTP response; Second is a
	// second request on the same connection), "socks" (a SOCKS5
	// CONNECT), "dns" (a query over Proto to Addr), "tls" (a TLS
	// handshake with SNI, then a GET), "tcp" (connect, send Send, read),
	// "udp" (send, wait for an answer), "icmp", "raw", "packet",
	// "unix" (connect to an abstract socket).
	Kind   string `json:"kind"`
	Addr   string `json:"addr,omitempty"`
	Send   string `json:"send,omitempty"`
	Second string `json:"second,omitempty"`
	// Resolve: ask the stub (127.0.0.1:53) for the name's A record first
	// and connect to the answer on Addr's port.
	Resolve string `json:"resolve,omitempty"`
	SNI     string `json:"sni,omitempty"`
	NoSNI   bool   `json:"noSni,omitempty"`
	// SOCKS5: the address type (1, 3, 4) and the destination.
	Atyp  int    `json:"atyp,omitempty"`
	Host  string `json:"host,omitempty"`
	Port  int    `json:"port,omitempty"`
	Proto string `json:"proto,omitempty"` // dns: udp or tcp
	QName string `json:"qname,omitempty"`
	QType uint16 `json:"qtype,omitempty"`
	// LocalPort binds the client socket (0: any); the DNS lookup of
	// Resolve uses LocalPort+2, a Second connection LocalPort+1.
	LocalPort int  `json:"localPort,omitempty"`
	Local6    bool `json:"local6,omitempty"`
}

// Result is what came back.
type Result struct {
	Name      string   `json:"name"`
	Err       string   `json:"err,omitempty"`
	Connected bool     `json:"connected"`
	Status    int      `json:"status,omitempty"`
	Deny      string   `json:"deny,omitempty"`
	Body      string   `json:"body,omitempty"`
	Status2   int      `json:"status2,omitempty"`
	Deny2     string   `json:"deny2,omitempty"`
	Body2     string   `json:"body2,omitempty"`
	Socks     int      `json:"socks"`
	Rcode     int      `json:"rcode"`
	Answers   []string `json:"answers,omitempty"`
	Resolved  string   `json:"resolved,omitempty"`
}

var caPool *x509.CertPool

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: relayprobe cases.json")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var cases []Case
	if err := json.Unmarshal(data, &cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if pem, err := os.ReadFile(strings.TrimSuffix(os.Args[1], ".json") + ".ca.pem"); err == nil {
		caPool = x509.NewCertPool()
		caPool.AppendCertsFromPEM(pem)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, c := range cases {
		r := run(c)
		r.Name = c.Name
		enc.Encode(r)
	}
}

func run(c Case) (r Result) {
	defer func() {
		if r.Err != "" && strings.Contains(r.Err, "use of closed") {
			r.Err = "closed"
		}
	}()
	addr := c.Addr
	if c.Resolve != "" {
		answers, rcode, err := query("udp", "127.0.0.1:53", c.Resolve, 1, c.LocalPort+2, false)
		if err != nil || rcode != 0 || len(answers) == 0 {
			r.Err = fmt.Sprintf("resolve %s: rcode %d %v", c.Resolve, rcode, err)
			r.Rcode = rcode
			return r
		}
		_, port, _ := net.SplitHostPort(addr)
		addr = net.JoinHostPort(answers[0], port)
		r.Resolved = answers[0]
	}
	switch c.Kind {
	case "http":
		conn, err := dialFrom("tcp", addr, c.LocalPort, c.Local6)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		defer conn.Close()
		r.Connected = true
		br := bufio.NewReader(conn)
		r.Status, r.Deny, r.Body, err = exchange(conn, br, c.Send)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		if c.Second != "" {
			r.Status2, r.Deny2, r.Body2, err = exchange(conn, br, c.Second)
			if err != nil {
				r.Err = "second: " + errName(err)
			}
		}
		return r
	case "socks":
		conn, err := dialFrom("tcp", addr, c.LocalPort, c.Local6)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		defer conn.Close()
		r.Connected = true
		r.Socks, err = socks(conn, c.Atyp, c.Host, c.Port)
		if err != nil {
			r.Err = errName(err)
		}
		return r
	case "dns":
		answers, rcode, err := query(c.Proto, addr, c.QName, c.QType, c.LocalPort, c.Local6)
		r.Answers, r.Rcode = answers, rcode
		if err != nil {
			r.Err = errName(err)
		}
		return r
	case "tls", "connect-tls":
		conn, err := dialFrom("tcp", addr, c.LocalPort, c.Local6)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		defer conn.Close()
		r.Connected = true
		if c.Kind == "connect-tls" {
			// A CONNECT tunnel first, then TLS inside it.
			br := bufio.NewReader(conn)
			r.Status, r.Deny, _, err = exchange(conn, br, "CONNECT "+c.Host+" HTTP/1.1\r\n\r\n")
			if err != nil || r.Status != 200 {
				r.Err = "connect: " + errName(err)
				return r
			}
			r.Status = 0
			if br.Buffered() > 0 {
				r.Err = "bytes after the CONNECT response"
				return r
			}
		}
		cfg := &tls.Config{ServerName: c.SNI, RootCAs: caPool}
		if c.NoSNI || c.SNI == "" {
			cfg = &tls.Config{InsecureSkipVerify: true}
		} else if caPool == nil {
			cfg.InsecureSkipVerify = true
		}
		if c.SNI != "" && strings.HasPrefix(c.SNI, "!") {
			// An SNI the certificate does not name: skip verification,
			// the relay must refuse it before any certificate is sent.
			cfg = &tls.Config{ServerName: c.SNI[1:], InsecureSkipVerify: true}
		}
		tc := tls.Client(conn, cfg)
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		if err := tc.Handshake(); err != nil {
			r.Err = "handshake: " + errName(err)
			return r
		}
		br := bufio.NewReader(tc)
		r.Status, r.Deny, r.Body, err = exchange(tc, br, c.Send)
		if err != nil {
			r.Err = errName(err)
		}
		return r
	case "tcp":
		var conn net.Conn
		var err error
		if c.LocalPort != 0 {
			conn, err = dialFrom("tcp", addr, c.LocalPort, c.Local6)
		} else {
			conn, err = net.DialTimeout("tcp", addr, 3*time.Second)
		}
		if err != nil {
			r.Err = errName(err)
			return r
		}
		defer conn.Close()
		r.Connected = true
		if c.Send != "" {
			conn.SetDeadline(time.Now().Add(3 * time.Second))
			conn.Write([]byte(c.Send))
			b, _ := io.ReadAll(io.LimitReader(conn, 512))
			r.Body = string(b)
		}
		return r
	case "udp":
		conn, err := net.Dial("udp", addr)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(c.Send)); err != nil {
			r.Err = errName(err)
			return r
		}
		conn.SetReadDeadline(time.Now().Add(time.Second))
		b := make([]byte, 512)
		n, err := conn.Read(b)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		r.Connected, r.Body = true, string(b[:n])
		return r
	case "icmp":
		// An unprivileged ping socket, then a raw one.
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, syscall.IPPROTO_ICMP)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		defer syscall.Close(fd)
		a := netip.MustParseAddr(c.Addr)
		echo := []byte{8, 0, 0, 0, 0, 1, 0, 1}
		if err := syscall.Sendto(fd, echo, 0, &syscall.SockaddrInet4{Addr: a.As4()}); err != nil {
			r.Err = errName(err)
			return r
		}
		r.Connected = true
		return r
	case "raw":
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		syscall.Close(fd)
		r.Connected = true
		return r
	case "packet":
		fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, 0x0300)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		syscall.Close(fd)
		r.Connected = true
		return r
	case "unix":
		conn, err := net.Dial("unix", "@"+c.Addr)
		if err != nil {
			r.Err = errName(err)
			return r
		}
		conn.Close()
		r.Connected = true
		return r
	}
	r.Err = "unknown kind " + c.Kind
	return r
}

func dialFrom(network, addr string, port int, six bool) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if port != 0 {
		ip := net.IPv4(127, 0, 0, 1)
		if six {
			ip = net.IPv6loopback
		}
		if network == "udp" {
			d.LocalAddr = &net.UDPAddr{IP: ip, Port: port}
		} else {
			d.LocalAddr = &net.TCPAddr{IP: ip, Port: port}
		}
	}
	return d.Dial(network, addr)
}

// exchange sends req and reads one HTTP response head and a little of
// its body; a connection closed before a response is an error.
func exchange(conn net.Conn, br *bufio.Reader, req string) (status int, deny, body string, err error) {
	conn.SetDeadline(time.Now().Add(8 * time.Second))
	if _, err := conn.Write([]byte(req)); err != nil {
		return 0, "", "", err
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return 0, "", "", err
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0, "", "", fmt.Errorf("bad status line %q", line)
	}
	status, _ = strconv.Atoi(f[1])
	length := -1
	for {
		h, err := br.ReadString('\n')
		if err != nil {
			return status, deny, "", err
		}
		h = strings.TrimRight(h, "\r\n")
		if h == "" {
			break
		}
		k, v, _ := strings.Cut(h, ":")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "x-vetto-deny":
			deny = strings.TrimSpace(v)
		case "content-length":
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if strings.HasPrefix(req, "CONNECT ") && status == 200 {
		return status, deny, "", nil
	}
	if length > 0 {
		b := make([]byte, min(length, 4096))
		n, _ := io.ReadFull(br, b)
		body = string(b[:n])
	}
	return status, deny, body, nil
}

func socks(conn net.Conn, atyp int, host string, port int) (int, error) {
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte{5, 1, 0}); err != nil {
		return 0, err
	}
	var hello [2]byte
	if _, err := io.ReadFull(conn, hello[:]); err != nil {
		return 0, err
	}
	req := []byte{5, 1, 0, byte(atyp)}
	switch atyp {
	case 1, 4:
		a := netip.MustParseAddr(host)
		req = append(req, a.AsSlice()...)
	case 3:
		req = append(req, byte(len(host)))
		req = append(req, host...)
	}
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	if _, err := conn.Write(req); err != nil {
		return 0, err
	}
	var reply [2]byte
	if _, err := io.ReadFull(conn, reply[:]); err != nil {
		return 0, err
	}
	return int(reply[1]), nil
}

// query asks one DNS question (with an OPT record, so that the stub adds
// its Extended DNS Error) and returns the A/AAAA answers and the rcode.
func query(proto, server, name string, qtype uint16, port int, six bool) ([]string, int, error) {
	msg := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1}
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		msg = append(msg, byte(len(l)))
		msg = append(msg, l...)
	}
	msg = append(msg, 0)
	msg = binary.BigEndian.AppendUint16(msg, qtype)
	msg = binary.BigEndian.AppendUint16(msg, 1)
	msg = append(msg, 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0) // OPT, 1232 bytes
	if proto == "" {
		proto = "udp"
	}
	conn, err := dialFrom(proto, server, port, six)
	if err != nil {
		return nil, -1, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	if proto == "tcp" {
		msg = append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...)
	}
	if _, err := conn.Write(msg); err != nil {
		return nil, -1, err
	}
	var resp []byte
	if proto == "tcp" {
		var l [2]byte
		if _, err := io.ReadFull(conn, l[:]); err != nil {
			return nil, -1, err
		}
		resp = make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(conn, resp); err != nil {
			return nil, -1, err
		}
	} else {
		resp = make([]byte, 1500)
		n, err := conn.Read(resp)
		if err != nil {
			return nil, -1, err
		}
		resp = resp[:n]
	}
	if len(resp) < 12 {
		return nil, -1, errors.New("short answer")
	}
	rcode := int(resp[3] & 0xf)
	qd, an := binary.BigEndian.Uint16(resp[4:]), binary.BigEndian.Uint16(resp[6:])
	off := 12
	for i := 0; i < int(qd); i++ {
		off = skipName(resp, off) + 4
	}
	var answers []string
	for i := 0; i < int(an) && off < len(resp); i++ {
		off = skipName(resp, off)
		if off+10 > len(resp) {
			break
		}
		typ := binary.BigEndian.Uint16(resp[off:])
		rdlen := int(binary.BigEndian.Uint16(resp[off+8:]))
		off += 10
		if off+rdlen > len(resp) {
			break
		}
		if a, ok := netip.AddrFromSlice(resp[off : off+rdlen]); ok && (typ == 1 || typ == 28) {
			answers = append(answers, a.String())
		}
		off += rdlen
	}
	return answers, rcode, nil
}

func skipName(b []byte, off int) int {
	for off < len(b) {
		l := int(b[off])
		switch {
		case l == 0:
			return off + 1
		case l&0xc0 == 0xc0:
			return off + 2
		default:
			off += 1 + l
		}
	}
	return off
}

func errName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENETUNREACH:
			return "ENETUNREACH"
		case syscall.ECONNREFUSED:
			return "ECONNREFUSED"
		case syscall.EPERM:
			return "EPERM"
		case syscall.EACCES:
			return "EACCES"
		case syscall.EHOSTUNREACH:
			return "EHOSTUNREACH"
		case syscall.EAFNOSUPPORT:
			return "EAFNOSUPPORT"
		case syscall.EINVAL:
			return "EINVAL"
		case syscall.ECONNRESET:
			return "ECONNRESET"
		case syscall.EADDRNOTAVAIL:
			return "EADDRNOTAVAIL"
		}
		return errno.Error()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "EOF"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return err.Error()
}
