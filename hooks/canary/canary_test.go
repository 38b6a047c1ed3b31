package canary

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Messages are framed: two on one stream read back as two, each exactly;
// one over the bound is refused on both sides.
func TestMessages(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMessage(&buf, Config{Nonce: "n1", MaskedRead: []string{"/s"}}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMessage(&buf, VerdictExec); err != nil {
		t.Fatal(err)
	}
	var cfg Config
	if err := ReadMessage(&buf, &cfg); err != nil || cfg.Nonce != "n1" || len(cfg.MaskedRead) != 1 {
		t.Fatalf("first message: %+v, %v", cfg, err)
	}
	var verdict string
	if err := ReadMessage(&buf, &verdict); err != nil || verdict != VerdictExec {
		t.Fatalf("second message: %q, %v", verdict, err)
	}
	if buf.Len() != 0 {
		t.Errorf("%d bytes left after both messages", buf.Len())
	}

	for _, tc := range []struct {
		name  string
		input []byte
		want  string
	}{
		{"over the bound", binary.BigEndian.AppendUint32(nil, maxMessage+1), "exceeds"},
		{"short length", []byte{0, 0}, "read canary message"},
		{"short body", append(binary.BigEndian.AppendUint32(nil, 10), "{}"...), "read canary message"},
		{"not JSON", append(binary.BigEndian.AppendUint32(nil, 3), "abc"...), "canary message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v Config
			err := ReadMessage(bytes.NewReader(tc.input), &v)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := EncodeMessage(strings.Repeat("x", maxMessage)); err == nil {
		t.Error("a message over the bound was encoded")
	}
}

// The probe, run on the host against a temporary tree, reports what it
// read, created and reached.
func TestProbe(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var in, out bytes.Buffer
	if err := WriteMessage(&in, Config{Nonce: "n1", MaskedRead: []string{secret}, WriteInside: []string{dir}, WriteOutside: []string{filepath.Join(dir, "missing")}, Connect: l.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	if err := Probe(&in, &out); err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := ReadMessage(&out, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Reads) != 1 || rep.Reads[0].SHA256 != Digest([]byte("token")) || rep.Reads[0].Size != 5 {
		t.Errorf("reads %+v", rep.Reads)
	}
	if data, err := os.ReadFile(File(dir, "n1")); err != nil || string(data) != "n1" {
		t.Errorf("canary file: %q, %v", data, err)
	}
	if a, ok := Find(rep.Writes, dir); !ok || a.Err != "" {
		t.Errorf("write inside: %+v, %v", a, ok)
	}
	if a, ok := Find(rep.Writes, filepath.Join(dir, "missing")); !ok || a.Err == "" {
		t.Errorf("write under a missing directory: %+v, %v", a, ok)
	}
	if rep.Connect == nil || rep.Connect.Err != "" {
		t.Errorf("connect %+v", rep.Connect)
	}
	_ = l.(*net.TCPListener).SetDeadline(time.Now().Add(time.Second))
	if c, err := l.Accept(); err != nil {
		t.Errorf("the host listener saw no connection: %v", err)
	} else {
		c.Close()
	}
}

// A connection that nothing answers fails within the dial bound, not the
// canaries' whole timeout.
func TestConnectRefused(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	rep := Try(Config{Nonce: "n", Connect: addr})
	if rep.Connect == nil || rep.Connect.Err == "" {
		t.Fatalf("connect to a closed port: %+v", rep.Connect)
	}
	if took := time.Since(start); took > Timeout {
		t.Errorf("took %s", took)
	}
}
