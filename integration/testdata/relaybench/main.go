// relaybench measures the egress relay for scripts/bench-relay.sh: the
// same measurement through the relay's proxy port (from inside a
// network-allowlist container) and directly (from the host), so that the
// two come from one run on one machine.
//
//	relaybench serve <echo-addr> <sink-addr>     the upstream: echo and discard servers
//	relaybench cfb proxy|direct <host:port> <n>  connect to first byte, n times: p50 p90 p99 in µs
//	relaybench tput proxy|direct <host:port> <MiB>  one stream to the sink: Gbit/s
//	relaybench idle <host:port> <n> <ready-file>  hold n idle tunnels until killed
//
// proxy goes through 127.0.0.1:3128 with CONNECT; direct dials host:port.
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(arg(2), arg(3))
	case "cfb":
		err = cfb(arg(2), arg(3), num(4))
	case "tput":
		err = tput(arg(2), arg(3), num(4))
	case "idle":
		err = idle(arg(2), num(3), arg(4))
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "relaybench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: relaybench serve|cfb|tput|idle … (see the source)")
	os.Exit(2)
}

func arg(i int) string {
	if len(os.Args) <= i {
		usage()
	}
	return os.Args[i]
}

func num(i int) int {
	n, err := strconv.Atoi(arg(i))
	if err != nil {
		usage()
	}
	return n
}

func serve(echoAddr, sinkAddr string) error {
	echo, err := net.Listen("tcp", echoAddr)
	if err != nil {
		return err
	}
	sink, err := net.Listen("tcp", sinkAddr)
	if err != nil {
		return err
	}
	go accept(echo, func(c net.Conn) { io.Copy(c, c) })
	go accept(sink, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		fmt.Fprintf(c, "%d\n", n)
	})
	fmt.Println("serving")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	return nil
}

func accept(l net.Listener, f func(net.Conn)) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			f(c)
		}()
	}
}

// dial opens a connection to target, through the proxy's CONNECT or not.
func dial(mode, target string) (net.Conn, error) {
	if mode == "direct" {
		return net.Dial("tcp", target)
	}
	c, err := net.Dial("tcp", "127.0.0.1:3128")
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		c.Close()
		return nil, err
	}
	// Read the head byte by byte: nothing after it may be consumed.
	var head []byte
	b := make([]byte, 1)
	for !strings.HasSuffix(string(head), "\r\n\r\n") {
		if _, err := c.Read(b); err != nil {
			c.Close()
			return nil, fmt.Errorf("CONNECT %s: %w", target, err)
		}
		head = append(head, b[0])
	}
	if !strings.HasPrefix(string(head), "HTTP/1.1 200") {
		c.Close()
		return nil, fmt.Errorf("CONNECT %s: %s", target, strings.SplitN(string(head), "\r\n", 2)[0])
	}
	return c, nil
}

// cfb: connect (and CONNECT), one byte there and back, close.
func cfb(mode, target string, n int) error {
	var d []time.Duration
	b := []byte{'x'}
	for i := 0; i < n+n/10; i++ {
		t0 := time.Now()
		c, err := dial(mode, target)
		if err != nil {
			return err
		}
		if _, err := c.Write(b); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, b); err != nil {
			return err
		}
		el := time.Since(t0)
		c.Close()
		if i >= n/10 { // the first tenth warms up
			d = append(d, el)
		}
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Nanoseconds()) / 1e3 }
	fmt.Printf("%.0f %.0f %.0f\n", q(0.5), q(0.9), q(0.99))
	return nil
}

// tput: one stream of mib MiB to the sink, timed to its byte count.
func tput(mode, target string, mib int) error {
	c, err := dial(mode, target)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 256<<10)
	total := int64(mib) << 20
	t0 := time.Now()
	for sent := int64(0); sent < total; sent += int64(len(buf)) {
		if _, err := c.Write(buf); err != nil {
			return err
		}
	}
	c.(interface{ CloseWrite() error }).CloseWrite()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	el := time.Since(t0)
	got, _ := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if got != total {
		return fmt.Errorf("the sink counted %d bytes, want %d", got, total)
	}
	fmt.Printf("%.2f\n", float64(total*8)/el.Seconds()/1e9)
	return nil
}

// idle opens n tunnels, checks each once, writes ready-file and holds them.
func idle(target string, n int, ready string) error {
	conns := make([]net.Conn, 0, n)
	b := []byte{'x'}
	for i := 0; i < n; i++ {
		c, err := dial("proxy", target)
		if err != nil {
			return err
		}
		if _, err := c.Write(b); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, b); err != nil {
			return err
		}
		conns = append(conns, c)
	}
	if err := os.WriteFile(ready, []byte(strconv.Itoa(len(conns))), 0o644); err != nil {
		return err
	}
	time.Sleep(time.Hour)
	return nil
}
