package relayproc

import (
	"net"
	"sync"
	"time"
)

// The relay serves the IPv4 and ::1 sockets of one port as one listener
// (relay.Listeners has one of each kind, and one server must answer both:
// the DNS stub's addresses are what the transparent listeners map back).

// joinedListener accepts from every listener it joins.
type joinedListener struct {
	ls    []net.Listener
	conns chan accepted
	done  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

type accepted struct {
	c   net.Conn
	err error
}

// joinListeners is nil for none and the listener itself for one.
func joinListeners(ls []net.Listener) net.Listener {
	switch len(ls) {
	case 0:
		return nil
	case 1:
		return ls[0]
	}
	j := &joinedListener{ls: ls, conns: make(chan accepted), done: make(chan struct{})}
	for _, l := range ls {
		j.wg.Add(1)
		go j.acceptFrom(l)
	}
	return j
}

func (j *joinedListener) acceptFrom(l net.Listener) {
	defer j.wg.Done()
	for {
		c, err := l.Accept()
		select {
		case j.conns <- accepted{c, err}:
		case <-j.done:
			if c != nil {
				c.Close()
			}
			return
		}
		if err != nil {
			if ne, ok := err.(interface{ Temporary() bool }); ok && ne.Temporary() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return
		}
	}
}

func (j *joinedListener) Accept() (net.Conn, error) {
	select {
	case a := <-j.conns:
		return a.c, a.err
	case <-j.done:
		return nil, net.ErrClosed
	}
}

// Close closes every listener and waits for their accept loops.
func (j *joinedListener) Close() error {
	var err error
	j.once.Do(func() {
		close(j.done)
		for _, l := range j.ls {
			if e := l.Close(); e != nil && err == nil {
				err = e
			}
		}
		j.wg.Wait()
	})
	return err
}

func (j *joinedListener) Addr() net.Addr { return j.ls[0].Addr() }

// joinedPacketConn reads from every packet conn it joins and answers on
// the one of the address family the answer goes to.
type joinedPacketConn struct {
	pcs  []net.PacketConn
	in   chan packet
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

type packet struct {
	data []byte
	from net.Addr
	err  error
}

// maxPacket bounds one datagram read; the DNS stub drops anything over
// its own, smaller, limit.
const maxPacket = 64 << 10

func joinPacketConns(pcs []net.PacketConn) net.PacketConn {
	switch len(pcs) {
	case 0:
		return nil
	case 1:
		return pcs[0]
	}
	j := &joinedPacketConn{pcs: pcs, in: make(chan packet), done: make(chan struct{})}
	for _, pc := range pcs {
		j.wg.Add(1)
		go j.readFrom(pc)
	}
	return j
}

func (j *joinedPacketConn) readFrom(pc net.PacketConn) {
	defer j.wg.Done()
	buf := make([]byte, maxPacket)
	for {
		n, from, err := pc.ReadFrom(buf)
		p := packet{from: from, err: err}
		if n > 0 {
			p.data = append([]byte(nil), buf[:n]...)
		}
		select {
		case j.in <- p:
		case <-j.done:
			return
		}
		if err != nil {
			if ne, ok := err.(interface{ Temporary() bool }); ok && ne.Temporary() {
				continue
			}
			return
		}
	}
}

// ReadFrom returns the next datagram from any of the conns; one larger
// than b fills b, as a UDP read does (the caller sees it as too long).
func (j *joinedPacketConn) ReadFrom(b []byte) (int, net.Addr, error) {
	select {
	case p := <-j.in:
		return copy(b, p.data), p.from, p.err
	case <-j.done:
		return 0, nil, net.ErrClosed
	}
}

func (j *joinedPacketConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	pc := j.pcs[0]
	if ua, ok := addr.(*net.UDPAddr); ok && ua.IP.To4() == nil {
		for _, c := range j.pcs {
			if la, ok := c.LocalAddr().(*net.UDPAddr); ok && la.IP.To4() == nil {
				pc = c
			}
		}
	}
	return pc.WriteTo(b, addr)
}

func (j *joinedPacketConn) Close() error {
	var err error
	j.once.Do(func() {
		close(j.done)
		for _, pc := range j.pcs {
			if e := pc.Close(); e != nil && err == nil {
				err = e
			}
		}
		j.wg.Wait()
	})
	return err
}

func (j *joinedPacketConn) LocalAddr() net.Addr { return j.pcs[0].LocalAddr() }

func (j *joinedPacketConn) SetDeadline(t time.Time) error {
	for _, pc := range j.pcs {
		if err := pc.SetDeadline(t); err != nil {
			return err
		}
	}
	return nil
}

func (j *joinedPacketConn) SetReadDeadline(t time.Time) error {
	for _, pc := range j.pcs {
		if err := pc.SetReadDeadline(t); err != nil {
			return err
		}
	}
	return nil
}

func (j *joinedPacketConn) SetWriteDeadline(t time.Time) error {
	for _, pc := range j.pcs {
		if err := pc.SetWriteDeadline(t); err != nil {
			return err
		}
	}
	return nil
}
