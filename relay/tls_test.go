package relay

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestReadClientHello(t *testing.T) {
	real := clientHello(t, "example.com")
	// The same ClientHello split over two records, as TLS allows.
	split := func(rec []byte) []byte {
		msg := rec[5:]
		a, b := msg[:10], msg[10:]
		out := append([]byte{0x16, 3, 1, 0, byte(len(a))}, a...)
		return append(append(out, 0x16, 3, 1, byte(len(b)>>8), byte(len(b))), b...)
	}(real)
	tests := []struct {
		name string
		in   []byte
		sni  string
		err  string // "" : want success
	}{
		{"crypto/tls with SNI", real, "example.com", ""},
		{"crypto/tls without SNI", clientHello(t, ""), "", ""},
		{"split over two records", split, "example.com", ""},
		{"built, one name", rawHello(sniExt("a.test")), "a.test", ""},
		{"built, no extensions", rawHello(), "", ""},
		{"two names", rawHello(sniExt("a.test", "b.test")), "", "more than one server name"},
		{"SNI extension twice", rawHello(sniExt("a.test"), sniExt("b.test")), "", "repeated"},
		{"name type not host_name", rawHello(sniExt("\x01a.test")), "", "name type 1"},
		{"empty name", rawHello(sniExt("")), "", "empty server name"},
		{"empty list", rawHello(ext(0, []byte{0, 0})), "", "empty server_name"},
		{"list longer than the extension", rawHello(ext(0, []byte{0, 9, 0, 0, 1, 'a'})), "", "bad server_name"},
		{"not TLS", []byte("GET / HTTP/1.1\r\n\r\n"), "", "not a TLS handshake"},
		{"alert record", []byte{0x15, 3, 1, 0, 2, 2, 40}, "", "not a TLS handshake"},
		{"ServerHello", []byte{0x16, 3, 3, 0, 4, 2, 0, 0, 0}, "", "not a ClientHello"},
		{"SSL 2 version", []byte{0x16, 2, 0, 0, 4, 1, 0, 0, 0}, "", "record version"},
		{"empty record", []byte{0x16, 3, 1, 0, 0}, "", "want 1-16384"},
		{"record over 16 KiB", []byte{0x16, 3, 1, 0x40, 0x01}, "", "want 1-16384"},
		{"message larger than the bound", []byte{0x16, 3, 1, 0, 4, 1, 0x01, 0, 0}, "", "larger than"},
		{"truncated record", real[:len(real)-3], "", "read TLS record"},
		{"truncated body", []byte{0x16, 3, 1, 0, 6, 1, 0, 0, 2, 3, 3}, "", "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, sni, err := readClientHello(bufio.NewReader(bytes.NewReader(tt.in)))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %q, %v; want an error saying %q", sni, err, tt.err)
				}
				return
			}
			if err != nil || sni != tt.sni {
				t.Fatalf("got %q, %v; want %q", sni, err, tt.sni)
			}
			if !bytes.Equal(raw, tt.in) {
				t.Errorf("raw records (%d bytes) are not the input (%d): they must be forwarded unchanged", len(raw), len(tt.in))
			}
		})
	}
}

// Records after the ClientHello stay in the reader for the tunnel.
func TestReadClientHelloLeavesTheRest(t *testing.T) {
	in := append(rawHello(sniExt("a.test")), "rest"...)
	br := bufio.NewReader(bytes.NewReader(in))
	if _, _, err := readClientHello(br); err != nil {
		t.Fatal(err)
	}
	rest, _ := br.Peek(br.Buffered())
	if string(rest) != "rest" {
		t.Fatalf("left %q, want %q", rest, "rest")
	}
	_, _, err := readClientHello(bufio.NewReader(bytes.NewReader([]byte("x"))))
	if !errors.Is(err, errNotTLS) {
		t.Fatalf("got %v, want errNotTLS", err)
	}
}
