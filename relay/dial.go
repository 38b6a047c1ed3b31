package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// maxDialAttempts bounds the addresses tried for one connection.
const maxDialAttempts = 4

// errNotChecked: the socket was about to connect somewhere the decision
// did not check. It should never happen; if it does, the relay refuses.
var errNotChecked = errors.New("not the checked address")

// dial connects to the first of the decision's checked addresses that
// answers. It dials address literals only, never a name, and the socket's
// Control hook checks once more, on the address the kernel is about to
// connect to, that it is the checked one and still passes the deny set:
// whatever a resolver, a changed route or a wrapped Dialer did since the
// decision, nothing else is connected to.
func (s *Server) dial(ctx context.Context, d decision) (*net.TCPConn, netip.AddrPort, error) {
	var errs []error
	for i, a := range d.addrs {
		if i == maxDialAttempts {
			break
		}
		want := netip.AddrPortFrom(a, d.port)
		c, err := s.dialOne(ctx, want)
		if err == nil {
			return c, want, nil
		}
		errs = append(errs, err)
	}
	return nil, netip.AddrPort{}, errors.Join(errs...)
}

// checkDial is the Control hook's check: the kernel is about to connect
// to address, which must be want and pass the deny set.
func (s *Server) checkDial(want netip.AddrPort, address string) error {
	got, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: control: %w: %q", want, errNotChecked, address)
	}
	if got = netip.AddrPortFrom(got.Addr().Unmap(), got.Port()); got != want {
		return fmt.Errorf("dial %s: control: %w: %s", want, errNotChecked, got)
	}
	if dn, ok := s.cfg.judge(got.Addr()); !ok {
		return fmt.Errorf("dial %s: control: deny set: %s", want, dn.why)
	}
	return nil
}

func (s *Server) dialOne(ctx context.Context, want netip.AddrPort) (*net.TCPConn, error) {
	dl := s.dialer // a copy: Control is per dial
	check := func(_, address string) error { return s.checkDial(want, address) }
	switch prev, prevCtx := dl.Control, dl.ControlContext; {
	case prevCtx != nil:
		dl.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
			if err := check(network, address); err != nil {
				return err
			}
			return prevCtx(ctx, network, address, c)
		}
	default:
		dl.Control = func(network, address string, c syscall.RawConn) error {
			if err := check(network, address); err != nil {
				return err
			}
			if prev != nil {
				return prev(network, address, c)
			}
			return nil
		}
	}
	network := "tcp4"
	if want.Addr().Is6() {
		network = "tcp6"
	}
	dctx, cancel := context.WithTimeout(ctx, s.cfg.dialTimeout)
	defer cancel()
	c, err := dl.DialContext(dctx, network, want.String())
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("dial %s: got a %T, not a TCP connection", want, c)
	}
	// And the connection is to where it was meant to be.
	if got, err := netip.ParseAddrPort(tc.RemoteAddr().String()); err != nil || netip.AddrPortFrom(got.Addr().Unmap(), got.Port()) != want {
		tc.Close()
		return nil, fmt.Errorf("dial %s: %w: connected to %s", want, errNotChecked, tc.RemoteAddr())
	}
	return tc, nil
}
