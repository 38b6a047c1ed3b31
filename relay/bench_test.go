package relay

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
)

// BenchmarkConnectFirstByte: from connect(2) to the first byte echoed
// back, through the relay (CONNECT, decision, upstream dial, 200, one
// byte each way) and, for comparison, dialling the upstream directly. All
// on loopback.
func BenchmarkConnectFirstByte(b *testing.B) {
	up := newRawUpstream(b)
	h := newHarness(b, bypassSettings(up.port), harnessConfig{})
	connect := fmt.Sprintf("CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", up.port, up.port)
	one := []byte{'x'}
	b.Run("relay", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp4", h.proxy)
			if err != nil {
				b.Fatal(err)
			}
			io.WriteString(c, connect)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("CONNECT: %v %v", resp, err)
			}
			c.Write(one)
			if _, err := br.ReadByte(); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp4", up.ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			c.Write(one)
			if _, err := c.Read(one); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
}

// sink is an upstream that reads until EOF and answers with the count.
func sink(b *testing.B) string {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				n, _ := io.Copy(io.Discard, c)
				c.Write(binary.BigEndian.AppendUint64(nil, uint64(n)))
			}()
		}
	}()
	return ln.Addr().String()
}

// BenchmarkThroughput: one stream, workload to upstream, 256 KiB writes,
// through a CONNECT tunnel and directly.
func BenchmarkThroughput(b *testing.B) {
	addr := sink(b)
	port := uint16(mustPort(b, addr))
	h := newHarness(b, bypassSettings(port), harnessConfig{})
	chunk := make([]byte, 256<<10)
	run := func(b *testing.B, c net.Conn, br io.Reader) {
		b.SetBytes(int64(len(chunk)))
		var sent uint64
		for b.Loop() {
			n, err := c.Write(chunk)
			if err != nil {
				b.Fatal(err)
			}
			sent += uint64(n)
		}
		c.(*net.TCPConn).CloseWrite()
		var got [8]byte
		if _, err := io.ReadFull(br, got[:]); err != nil || binary.BigEndian.Uint64(got[:]) != sent {
			b.Fatalf("the upstream counted %d bytes (%v), want %d", binary.BigEndian.Uint64(got[:]), err, sent)
		}
		c.Close()
	}
	b.Run("relay", func(b *testing.B) {
		c, err := net.Dial("tcp4", h.proxy)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\n\r\n", port)
		br := bufio.NewReader(c)
		if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
			b.Fatalf("CONNECT: %v %v", resp, err)
		}
		run(b, c, br)
	})
	b.Run("direct", func(b *testing.B) {
		c, err := net.Dial("tcp4", addr)
		if err != nil {
			b.Fatal(err)
		}
		run(b, c, c)
	})
}

func mustPort(b *testing.B, addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		b.Fatal(err)
	}
	var n int
	fmt.Sscan(p, &n)
	return n
}
