package relay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// maxHello bounds the ClientHello the relay reads (it may span several
// records). Real ones are under 2 KiB, a little more with post-quantum key
// shares.
const maxHello = 32 << 10

// errNotTLS: the stream does not open with a TLS handshake record.
var errNotTLS = errors.New("not a TLS handshake")

// readClientHello reads a TLS ClientHello from br without interpreting
// TLS any further: the records, unchanged, to forward to the upstream, and
// the SNI host_name ("" when there is none). It is a bounded parser of
// RFC 8446 §4.1.2 and RFC 6066 §3, written here rather than taken from
// crypto/tls, which parses a ClientHello only inside a handshake it would
// then have to terminate.
func readClientHello(br *bufio.Reader) (raw []byte, sni string, err error) {
	b, err := br.Peek(1)
	if err != nil {
		return nil, "", err
	}
	if b[0] != 0x16 {
		return nil, "", fmt.Errorf("%w: first byte 0x%02x", errNotTLS, b[0])
	}
	var msg []byte
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil, "", fmt.Errorf("read TLS record: %w", err)
		}
		if hdr[0] != 0x16 {
			return nil, "", fmt.Errorf("%w: record type %d inside a ClientHello", errNotTLS, hdr[0])
		}
		if hdr[1] != 3 {
			return nil, "", fmt.Errorf("%w: record version %d.%d", errNotTLS, hdr[1], hdr[2])
		}
		n := int(hdr[3])<<8 | int(hdr[4])
		if n == 0 || n > 1<<14 {
			return nil, "", fmt.Errorf("TLS record of %d bytes: want 1-16384", n)
		}
		if len(raw)+len(hdr)+n > maxHello {
			return nil, "", fmt.Errorf("ClientHello larger than %d bytes", maxHello)
		}
		raw = append(raw, hdr[:]...)
		start := len(raw)
		raw = append(raw, make([]byte, n)...)
		if _, err := io.ReadFull(br, raw[start:]); err != nil {
			return nil, "", fmt.Errorf("read TLS record: %w", err)
		}
		msg = append(msg, raw[start:]...)
		if len(msg) < 4 {
			continue
		}
		if msg[0] != 1 {
			return nil, "", fmt.Errorf("%w: handshake message %d, not a ClientHello", errNotTLS, msg[0])
		}
		size := int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
		if size > maxHello {
			return nil, "", fmt.Errorf("ClientHello of %d bytes: larger than %d", size, maxHello)
		}
		if len(msg) >= 4+size {
			sni, err := parseClientHello(msg[4 : 4+size])
			return raw, sni, err
		}
	}
}

// cursor is a bounds-checked cursor over a byte slice: a short read sets
// bad and yields zeros, so the parser below checks once at the end of
// each structure instead of at every field.
type cursor struct {
	b   []byte
	bad bool
}

func (r *cursor) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.bad, r.b = true, nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *cursor) u8() int {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return int(b[0])
}

func (r *cursor) u16() int {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return int(b[0])<<8 | int(b[1])
}

// vec reads a vector with a length prefix of 1 or 2 bytes.
func (r *cursor) vec(prefix int) *cursor {
	n := r.u8()
	if prefix == 2 {
		n = n<<8 | r.u8()
	}
	return &cursor{b: r.bytes(n), bad: r.bad}
}

const extServerName = 0

// parseClientHello returns the host_name of a ClientHello's server_name
// extension, or "" when it has none. It refuses what a TLS server would
// refuse or read in another way than the relay: trailing bytes, a
// repeated extension (RFC 8446 §4.2), more than one name or a name type
// other than host_name (RFC 6066 §3), an empty name.
func parseClientHello(body []byte) (string, error) {
	r := &cursor{b: body}
	r.bytes(2 + 32) // legacy_version, random
	sid, cs, cm := r.vec(1), r.vec(2), r.vec(1)
	switch {
	case r.bad:
		return "", errors.New("parse ClientHello: truncated")
	case len(sid.b) > 32:
		return "", errors.New("parse ClientHello: session id longer than 32")
	case len(cs.b) == 0 || len(cs.b)%2 != 0:
		return "", errors.New("parse ClientHello: bad cipher suites")
	case len(cm.b) == 0:
		return "", errors.New("parse ClientHello: no compression methods")
	}
	if len(r.b) == 0 {
		return "", nil // no extensions at all (TLS 1.2 allows it)
	}
	exts := r.vec(2)
	if r.bad || len(r.b) != 0 {
		return "", errors.New("parse ClientHello: bad extensions length")
	}
	seen := map[int]bool{}
	sni := ""
	for len(exts.b) > 0 {
		typ := exts.u16()
		data := exts.vec(2)
		if exts.bad {
			return "", errors.New("parse ClientHello: truncated extension")
		}
		if seen[typ] {
			return "", fmt.Errorf("parse ClientHello: extension %d repeated", typ)
		}
		seen[typ] = true
		if typ != extServerName {
			continue
		}
		list := data.vec(2)
		if data.bad || len(data.b) != 0 {
			return "", errors.New("parse ClientHello: bad server_name extension")
		}
		for len(list.b) > 0 {
			nameType := list.u8()
			name := list.vec(2)
			switch {
			case list.bad || name.bad:
				return "", errors.New("parse ClientHello: truncated server name")
			case nameType != 0:
				return "", fmt.Errorf("parse ClientHello: server name type %d", nameType)
			case sni != "":
				return "", errors.New("parse ClientHello: more than one server name")
			case len(name.b) == 0:
				return "", errors.New("parse ClientHello: empty server name")
			}
			sni = string(name.b)
		}
		if sni == "" {
			return "", errors.New("parse ClientHello: empty server_name extension")
		}
	}
	return sni, nil
}
