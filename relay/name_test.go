package relay

import (
	"errors"
	"testing"
)

func TestNormalizeName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		err  error // nil: want success
	}{
		{"plain", "example.com", "example.com", nil},
		{"upper case folds", "EXAMPLE.Com", "example.com", nil},
		{"one trailing dot is the root", "example.com.", "example.com", nil},
		{"two trailing dots", "example.com..", "", ErrBadName},
		{"leading dot", ".example.com", "", ErrBadName},
		{"empty label", "a..b", "", ErrBadName},
		{"empty", "", "", ErrBadName},
		{"only a dot", ".", "", ErrBadName},
		{"valid A-label", "xn--bcher-kva.de", "xn--bcher-kva.de", nil},
		{"upper-case A-label folds", "XN--BCHER-KVA.DE", "xn--bcher-kva.de", nil},
		{"A-label ending in a hyphen", "xn--zz--.com", "", ErrBadName},
		{"punycode that decodes to control characters", "xn--abc.com", "", ErrBadName},
		{"look-alike A-label is its own name", "xn--pple-43d.com", "xn--pple-43d.com", nil},
		{"raw U-label is refused, not mapped", "bücher.de", "", ErrBadName},
		{"cyrillic look-alike", "\u0430pple.com", "", ErrBadName},
		{"fullwidth dot U+FF0E", "apple\uff0ecom", "", ErrBadName},
		{"ideographic dot U+3002", "apple\u3002com", "", ErrBadName},
		{"hyphens at 3-4 are real names", "r3---sn-abc.googlevideo.com", "r3---sn-abc.googlevideo.com", nil},
		{"label starts with hyphen", "-a.com", "", ErrBadName},
		{"label ends with hyphen", "a-.com", "", ErrBadName},
		{"underscore", "a_b.com", "", ErrBadName},
		{"space", "a b.com", "", ErrBadName},
		{"percent encoding", "a%2ecom", "", ErrBadName},
		{"NUL", "a.com\x00.evil", "", ErrBadName},
		{"port confusion", "a.com:443.b.com", "", ErrBadName},
		{"userinfo", "user@a.com", "", ErrUserinfo},
		{"userinfo confusion", "a.com@b.com", "", ErrUserinfo},
		{"label of 64", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", "", ErrBadName},
		{"name of 254", longName(254), "", ErrBadName},
		{"name of 253", longName(253), longName(253), nil},
		{"dotted quad", "127.0.0.1", "", ErrIPLiteral},
		{"IPv6", "::1", "", ErrIPLiteral},
		{"bracketed IPv6", "[::1]", "", ErrIPLiteral},
		{"IPv6 with zone", "fe80::1%eth0", "", ErrIPLiteral},
		{"mapped", "::ffff:127.0.0.1", "", ErrIPLiteral},
		{"short form 127.1", "127.1", "", ErrNumericName},
		{"hex 0x7f000001", "0x7f000001", "", ErrNumericName},
		{"hex parts 0x7f.1", "0x7f.1", "", ErrNumericName},
		{"octal 0177.0.0.1", "0177.0.0.1", "", ErrNumericName},
		{"octal 017700000001", "017700000001", "", ErrNumericName},
		{"decimal 2130706433", "2130706433", "", ErrNumericName},
		{"three parts 127.0.1", "127.0.1", "", ErrNumericName},
		{"upper hex 0X7F.1", "0X7F.1", "", ErrNumericName},
		{"0x alone", "a.0x", "", ErrNumericName},
		{"numeric last label after a name", "evil.com.1", "", ErrNumericName},
		{"numeric with trailing dot", "127.1.", "", ErrNumericName},
		{"digits inside are fine", "1.2.3.example.com", "1.2.3.example.com", nil},
		{"hex-looking TLD without 0x is a name", "a.beef", "a.beef", nil},
		{"all-digit first label", "123.com", "123.com", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeName(tt.in)
			if tt.err == nil {
				if err != nil || got != tt.want {
					t.Fatalf("NormalizeName(%q) = %q, %v; want %q, nil", tt.in, got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("NormalizeName(%q) = %q, %v; want an error wrapping %v", tt.in, got, err, tt.err)
			}
		})
	}
}

func longName(n int) string {
	b := make([]byte, 0, n)
	for len(b) < n {
		if len(b)%10 == 9 {
			b = append(b, '.')
		} else {
			b = append(b, 'a')
		}
	}
	b[len(b)-1] = 'z'
	return string(b)
}

func TestSplitHostPort(t *testing.T) {
	tests := []struct {
		in       string
		def      uint16
		host     string
		port     uint16
		wantFail bool
	}{
		{"a.com:443", 0, "a.com", 443, false},
		{"a.com", 80, "a.com", 80, false},
		{"a.com", 0, "", 0, true},
		{"a.com:", 80, "", 0, true},
		{"a.com:0", 80, "", 0, true},
		{"a.com:65536", 80, "", 0, true},
		{"a.com:65535", 80, "a.com", 65535, false},
		{"a.com:0443", 80, "", 0, true},
		{"a.com:+443", 80, "", 0, true},
		{"a.com:443.b.com", 80, "", 0, true},
		{"a.com:443:80", 80, "", 0, true},
		{"[::1]:443", 0, "[::1]", 443, false},
		{"[::1]", 80, "[::1]", 80, false},
		{"[::1]x", 80, "", 0, true},
		{"[::1", 80, "", 0, true},
		{":443", 80, "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			host, port, err := splitHostPort(tt.in, tt.def)
			if tt.wantFail {
				if err == nil {
					t.Fatalf("splitHostPort(%q) = %q, %d; want an error", tt.in, host, port)
				}
				return
			}
			if err != nil || host != tt.host || port != tt.port {
				t.Fatalf("splitHostPort(%q) = %q, %d, %v; want %q, %d", tt.in, host, port, err, tt.host, tt.port)
			}
		})
	}
}
