package linux

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	goruntime "runtime"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// relaySock is one listening socket of the relay, made inside the
// container's network namespace.
type relaySock struct {
	hooks.RelaySocket
	// Kind is what the relay serves on it: "proxy", "dns" or
	// "transparent"; Port is a transparent listener's port (what the
	// workload connected to, and what the rules are matched with).
	Kind string
	Port uint16
	// optional: skipped when the namespace has no such address (::1 on a
	// lo without IPv6).
	optional bool
	file     *os.File
}

// The transparent listeners' ports: plain and TLS web, what a rule
// without a port allows.
const (
	transparentHTTP  = 80
	transparentHTTPS = 443
)

var (
	loopback4 = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	any4      = netip.AddrFrom4([4]byte{})
)

// relaySocketPlan is every socket the relay gets (docs/network.md). The
// namespace has only lo, so 0.0.0.0 is loopback too; the transparent
// listeners need it to accept connections to every stub address in
// 127.77.0.0/16.
func relaySocketPlan() []*relaySock {
	s := func(name, kind string, stream bool, addr netip.Addr, port uint16, optional bool) *relaySock {
		rs := &relaySock{RelaySocket: hooks.RelaySocket{Name: name, Stream: stream, Addr: netip.AddrPortFrom(addr, port)}, Kind: kind, optional: optional}
		if kind == "transparent" {
			rs.Port = port
		}
		return rs
	}
	return []*relaySock{
		s("proxy", "proxy", true, loopback4, spec.RelayProxyPort, false),
		s("proxy6", "proxy", true, netip.IPv6Loopback(), spec.RelayProxyPort, true),
		s("dns-udp", "dns", false, loopback4, spec.RelayDNSPort, false),
		s("dns-udp6", "dns", false, netip.IPv6Loopback(), spec.RelayDNSPort, true),
		s("dns-tcp", "dns", true, loopback4, spec.RelayDNSPort, false),
		s("dns-tcp6", "dns", true, netip.IPv6Loopback(), spec.RelayDNSPort, true),
		s("transparent-80", "transparent", true, any4, transparentHTTP, false),
		s("transparent-443", "transparent", true, any4, transparentHTTPS, false),
	}
}

// makeRelaySockets creates the relay's sockets inside the network
// namespace of the process pidfd refers to (setns(2) with a pidfd, Linux
// 5.8: the namespace of that very process, whatever happened to its pid
// since). It runs on a goroutine locked to its OS thread that is never
// unlocked: the thread enters the container's namespace, makes the
// sockets and is left to die with the goroutine — Go retires a thread
// whose goroutine exits locked, so nothing else ever runs in that
// namespace by mistake. It never switches back. The sockets keep the
// namespace they were made in.
func makeRelaySockets(pidfd int) (socks []*relaySock, retErr error) {
	type result struct {
		socks []*relaySock
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		goruntime.LockOSThread()
		var res result
		defer func() { ch <- res }()
		if err := unix.Setns(pidfd, unix.CLONE_NEWNET); err != nil {
			res.err = fmt.Errorf("setns into the init's network namespace: %w", err)
			return
		}
		for _, rs := range relaySocketPlan() {
			f, err := listenSocket(rs.RelaySocket)
			if err != nil {
				if rs.optional && (errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT)) {
					continue
				}
				closeSocks(res.socks)
				res.socks, res.err = nil, fmt.Errorf("relay socket %s on %s: %w", rs.Name, rs.Addr, err)
				return
			}
			rs.file, rs.Fd = f, int(f.Fd())
			res.socks = append(res.socks, rs)
		}
	}()
	r := <-ch
	return r.socks, r.err
}

// listenSocket makes one socket, bound (and listening, for a stream) on
// s.Addr, close-on-exec. IPv6 sockets are IPv6 only.
func listenSocket(s hooks.RelaySocket) (*os.File, error) {
	domain, typ := unix.AF_INET, unix.SOCK_DGRAM
	if s.Addr.Addr().Is6() {
		domain = unix.AF_INET6
	}
	if s.Stream {
		typ = unix.SOCK_STREAM
	}
	fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
		}
	}()
	var sa unix.Sockaddr
	if domain == unix.AF_INET6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1); err != nil {
			return nil, fmt.Errorf("setsockopt IPV6_V6ONLY: %w", err)
		}
		sa = &unix.SockaddrInet6{Port: int(s.Addr.Port()), Addr: s.Addr.Addr().As16()}
	} else {
		sa = &unix.SockaddrInet4{Port: int(s.Addr.Port()), Addr: s.Addr.Addr().As4()}
	}
	if err := unix.Bind(fd, sa); err != nil {
		return nil, fmt.Errorf("bind: %w", err)
	}
	if s.Stream {
		if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
			return nil, fmt.Errorf("listen: %w", err)
		}
	}
	ok = true
	return os.NewFile(uintptr(fd), "relay-"+s.Name), nil
}

func closeSocks(socks []*relaySock) {
	for _, s := range socks {
		if s.file != nil {
			s.file.Close()
		}
	}
}
