package relay

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// The kinds of names NormalizeName refuses. Each is wrapped with the name
// and the detail; callers branch with errors.Is.
var (
	// ErrIPLiteral: the name is an IP address (v4, v6, bracketed, with a
	// zone). Rules name hosts, never addresses, so a literal is refused
	// rather than matched or resolved.
	ErrIPLiteral = errors.New("an IP address, not a host name")
	// ErrNumericName: the last label is a number (decimal, octal or
	// 0x-hex), so inet_aton(3) — and with it glibc's getaddrinfo, curl and
	// browsers — would read the name as an IPv4 address (127.1,
	// 0x7f.1, 017700000001, 2130706433).
	ErrNumericName = errors.New("reads as an IPv4 address")
	// ErrUserinfo: the name carries user@ credentials.
	ErrUserinfo = errors.New("carries userinfo")
	// ErrBadName: anything else that is not an ASCII LDH host name.
	ErrBadName = errors.New("not a host name")
)

// maxName is RFC 1035's limit on a name in presentation form without the
// root dot (255 octets on the wire).
const maxName = 253

// NormalizeName returns the one form of a host name the relay judges: what
// the workload sent (a CONNECT or URI authority's host, a Host header's
// host, a TLS SNI, a SOCKS5 domain, a DNS question) in ASCII lower case
// with one trailing dot removed. It refuses, with an error wrapping
// ErrIPLiteral, ErrNumericName, ErrUserinfo or ErrBadName:
//
//   - IP literals in every form netip accepts, bracketed or with a zone;
//   - names whose last label is numeric (every string inet_aton accepts
//     ends in such a label);
//   - userinfo (user@host), a port or any other ':' (a.com:443.b.com);
//   - non-ASCII: names on the wire are A-labels (xn--…). Nothing is mapped,
//     so full-width dots, compatibility characters and upper-case Unicode
//     are refused instead of being folded into a name the upstream server
//     may read differently;
//   - A-labels that do not decode to a valid label (idna.Registration,
//     which validates and maps nothing: see checkALabel);
//   - empty labels (a..b, .a, a..), labels over 63 octets, names over 253,
//     and characters outside letters, digits, '-' and '.'.
func NormalizeName(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("name %q: %w: empty", name, ErrBadName)
	}
	if strings.Contains(name, "@") {
		return "", fmt.Errorf("name %q: %w", name, ErrUserinfo)
	}
	if isIPLiteral(name) {
		return "", fmt.Errorf("name %q: %w", name, ErrIPLiteral)
	}
	b := []byte(name)
	for i, c := range b {
		switch {
		case c >= 0x80:
			return "", fmt.Errorf("name %q: %w: not ASCII: send the A-label (xn--…)", name, ErrBadName)
		case c >= 'A' && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
		case c == ':':
			return "", fmt.Errorf("name %q: %w: contains ':' (a port is not part of a name)", name, ErrBadName)
		default:
			return "", fmt.Errorf("name %q: %w: character %q", name, ErrBadName, c)
		}
	}
	n := string(b)
	// One trailing dot is the root: "example.com." is "example.com".
	n = strings.TrimSuffix(n, ".")
	if len(n) > maxName {
		return "", fmt.Errorf("name %q: %w: longer than %d", name, ErrBadName, maxName)
	}
	labels := strings.Split(n, ".")
	for _, l := range labels {
		switch {
		case l == "":
			return "", fmt.Errorf("name %q: %w: empty label", name, ErrBadName)
		case len(l) > 63:
			return "", fmt.Errorf("name %q: %w: label longer than 63", name, ErrBadName)
		case l[0] == '-' || l[len(l)-1] == '-':
			return "", fmt.Errorf("name %q: %w: label %q starts or ends with '-'", name, ErrBadName, l)
		}
		if strings.HasPrefix(l, "xn--") {
			if err := checkALabel(l); err != nil {
				return "", fmt.Errorf("name %q: %w: %w", name, ErrBadName, err)
			}
		}
	}
	if numericLabel(labels[len(labels)-1]) {
		return "", fmt.Errorf("name %q: %w", name, ErrNumericName)
	}
	return n, nil
}

// checkALabel validates one xn-- label with the Registration profile:
// the punycode must decode to a label x/net/idna's UTS #46 tables accept
// (bidi, joiners, hyphens, disallowed code points) and encode back to the
// same bytes, so
// one name has exactly one A-label. Registration rather than Lookup:
// Lookup maps (case, width, compatibility forms), and a mapping the relay
// applies but the upstream TLS or HTTP server does not is a parser
// differential. The profile is applied per xn-- label only, because on
// plain LDH labels its CheckHyphens rule refuses real host names such as
// r3---sn-abc.googlevideo.com.
func checkALabel(l string) error {
	a, err := idna.Registration.ToASCII(l)
	if err != nil {
		return err
	}
	if a != l {
		return fmt.Errorf("the A-label %q is not canonical (want %q)", l, a)
	}
	return nil
}

// numericLabel reports whether inet_aton would read a label as a number:
// all decimal digits (octal when it starts with 0), or 0x followed by
// nothing but hex digits. inet_aton's every accepted form (a, a.b, a.b.c,
// a.b.c.d) ends in such a part, and the WHATWG URL standard treats any
// host ending in one as IPv4, so refusing these covers both.
func numericLabel(l string) bool {
	if l == "" {
		return false
	}
	if strings.HasPrefix(l, "0x") {
		l = l[2:]
		for i := 0; i < len(l); i++ {
			if !isHex(l[i]) {
				return false
			}
		}
		return true // "0x" alone is 0 to inet_aton
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isIPLiteral reports whether s is an IP address as netip reads it, with
// or without brackets or a zone.
func isIPLiteral(s string) bool {
	if strings.HasPrefix(s, "[") {
		return true // only IPv6 literals are bracketed; never a name
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// splitHostPort splits an authority ("host:port", "host", "[v6]:port")
// strictly: at most one ':' outside brackets, a port of 1-5 decimal digits
// without sign or leading zero, 1-65535. def is the port when none is
// given; 0 means a port is required. The host is returned as written
// (brackets kept) for NormalizeName to judge.
func splitHostPort(auth string, def uint16) (string, uint16, error) {
	host, portText := auth, ""
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return "", 0, fmt.Errorf("authority %q: %w: unclosed '['", auth, ErrBadName)
		}
		host = auth[:end+1]
		switch rest := auth[end+1:]; {
		case rest == "":
		case rest[0] == ':':
			portText = rest[1:]
			if portText == "" {
				return "", 0, fmt.Errorf("authority %q: empty port", auth)
			}
		default:
			return "", 0, fmt.Errorf("authority %q: %w: text after ']'", auth, ErrBadName)
		}
	} else if i := strings.IndexByte(auth, ':'); i >= 0 {
		host, portText = auth[:i], auth[i+1:]
		if strings.IndexByte(portText, ':') >= 0 {
			if isIPLiteral(auth) {
				return auth, def, fmt.Errorf("authority %q: %w", auth, ErrIPLiteral)
			}
			return "", 0, fmt.Errorf("authority %q: %w: more than one ':'", auth, ErrBadName)
		}
		if portText == "" {
			return "", 0, fmt.Errorf("authority %q: empty port", auth)
		}
	}
	if host == "" {
		return "", 0, fmt.Errorf("authority %q: %w: no host", auth, ErrBadName)
	}
	if portText == "" {
		if def == 0 {
			return "", 0, fmt.Errorf("authority %q: no port", auth)
		}
		return host, def, nil
	}
	port, err := parsePort(portText)
	if err != nil {
		return "", 0, fmt.Errorf("authority %q: %w", auth, err)
	}
	return host, port, nil
}

// parsePort reads a port strictly: 1-5 decimal digits, no sign, no
// leading zero (a parser that reads 0443 as octal must not disagree with
// us), 1-65535.
func parsePort(s string) (uint16, error) {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, fmt.Errorf("port %q: must be 1-65535", s)
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("port %q: must be 1-65535", s)
		}
		n = n*10 + int(s[i]-'0')
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q: must be 1-65535", s)
	}
	return uint16(n), nil
}
