package relay

import (
	"errors"
	"net"
	"os"
	"time"
)

// errHeadTooLarge: a request or response head ran past its budget.
var errHeadTooLarge = errors.New("head larger than the limit")

// conn wraps one side of a connection the relay parses (not the spliced
// tunnels, which use the bare *net.TCPConn): a budget bounds what a
// request or response head may read, each read and write past the head
// pushes an idle deadline ahead, and the bytes are counted.
type conn struct {
	net.Conn
	budget    int64         // bytes the current head may still read; <0: no limit
	idle      time.Duration // >0: every Read and Write first sets its deadline this far ahead
	in, out   int64         // bytes read and written
	overspent bool
}

func (c *conn) Read(p []byte) (int, error) {
	if c.budget == 0 {
		c.overspent = true
		return 0, errHeadTooLarge
	}
	if c.budget > 0 && int64(len(p)) > c.budget {
		p = p[:c.budget]
	}
	if c.idle > 0 {
		c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	}
	n, err := c.Conn.Read(p)
	c.in += int64(n)
	if c.budget > 0 {
		c.budget -= int64(n)
	}
	return n, err
}

func (c *conn) Write(p []byte) (int, error) {
	if c.idle > 0 {
		c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	}
	n, err := c.Conn.Write(p)
	c.out += int64(n)
	return n, err
}

// head starts reading a head: the budget, and an absolute deadline by
// which the whole head must have arrived (a client sending a byte a
// second cannot keep it open: slow loris).
func (c *conn) head(budget int64, deadline time.Time) {
	c.budget, c.idle = budget, 0
	c.Conn.SetReadDeadline(deadline)
}

// body ends the head: no budget, and the idle deadline.
func (c *conn) body(idle time.Duration) {
	c.budget, c.idle = -1, idle
}

func isTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// raw ends the relay's parsing of the connection: what is still read
// through the wrapper (a bufio.Reader's refills during the TLS gate) has
// no budget and leaves the deadlines to the caller.
func (c *conn) raw() {
	c.budget, c.idle = -1, 0
}
