package relay

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// ErrBadRule is wrapped by every error ParseRule returns, and by
// NewConfig's errors about rules.
var ErrBadRule = errors.New("bad network rule")

// Rule is one parsed network.allow entry.
//
//	example.com        the host itself, not its subdomains
//	*.example.com      every subdomain of example.com, not example.com itself
//	example.com:8443   the host on that port only
//
// A rule without a port allows ports 80 and 443; a rule with a port allows
// that port only (list "example.com" and "example.com:8443" for all
// three). Mode strict takes only exact host:port rules (NewConfig).
type Rule struct {
	// Host is the normalized host, or for a wildcard the domain after "*.".
	Host string
	// Wildcard: the rule is "*.Host" and matches names below Host only.
	Wildcard bool
	// Port is the one port allowed, or 0 for 80 and 443.
	Port uint16
}

// defaultPorts are what a rule without a port allows: plain and TLS web.
var defaultPorts = []uint16{80, 443}

// ParseRule parses one rule as written in a policy's network.allow.
// Unicode hosts are converted to A-labels (idna.Registration, which maps
// nothing: the rule's author writes the name the way it is registered).
// Errors wrap ErrBadRule and quote the rule: an empty rule, a scheme or
// path, "*." or "*" without a domain, a wildcard over a top-level domain
// ("*.com"), '*' anywhere but the first label, empty labels (a..b), a
// port outside 1-65535, and IP literals or names that read as one.
func ParseRule(text string) (Rule, error) {
	bad := func(format string, a ...any) (Rule, error) {
		return Rule{}, fmt.Errorf("rule %q: %w: %s", text, ErrBadRule, fmt.Sprintf(format, a...))
	}
	if text == "" {
		return bad("empty")
	}
	if strings.Contains(text, "/") || strings.ContainsAny(text, " \t\r\n") {
		return bad("not a host: write example.com, *.example.com or host:port, without a scheme or path")
	}
	if _, err := netip.ParseAddr(text); err == nil || strings.HasPrefix(text, "[") {
		return bad("an IP address: rules name hosts, and IP literals are always refused")
	}
	host, port := text, uint16(0)
	if i := strings.LastIndexByte(text, ':'); i >= 0 {
		p, err := parsePort(text[i+1:])
		if err != nil {
			return bad("%v", err)
		}
		host, port = text[:i], p
	}
	r := Rule{Port: port}
	if strings.HasPrefix(host, "*.") {
		r.Wildcard, host = true, host[2:]
		if host == "" {
			return bad("wildcard without a domain: write *.example.com")
		}
	}
	if strings.Contains(host, "*") {
		return bad("'*' is allowed only as the whole first label (*.example.com)")
	}
	ascii := host
	if !isASCII(host) {
		a, err := idna.Registration.ToASCII(strings.ToLower(host))
		if err != nil {
			return bad("not a valid internationalized name: %v", err)
		}
		ascii = a
	}
	if strings.HasSuffix(ascii, ".") {
		// NormalizeName accepts the root dot on the wire; a rule has no
		// reason to carry it, and "a.com.." must not pass as "a.com.".
		return bad("trailing dot: write the name without it")
	}
	n, err := NormalizeName(ascii)
	switch {
	case errors.Is(err, ErrIPLiteral), errors.Is(err, ErrNumericName):
		return bad("reads as an IP address: rules name hosts, and IP literals are always refused")
	case err != nil:
		return bad("%v", err)
	}
	if r.Wildcard && !strings.Contains(n, ".") {
		return bad("a wildcard over the top-level domain %q allows all of it: name the domain (*.example.%s)", n, n)
	}
	r.Host = n
	return r, nil
}

// String is the rule in canonical policy form; it is the rule id in audit
// events.
func (r Rule) String() string {
	s := r.Host
	if r.Wildcard {
		s = "*." + s
	}
	if r.Port != 0 {
		s += ":" + strconv.Itoa(int(r.Port))
	}
	return s
}

// matchName reports whether the rule covers the normalized name, whatever
// the port.
func (r Rule) matchName(name string) bool {
	if r.Wildcard {
		return len(name) > len(r.Host)+1 && strings.HasSuffix(name, r.Host) && name[len(name)-len(r.Host)-1] == '.'
	}
	return name == r.Host
}

// matchPort reports whether the rule allows the port.
func (r Rule) matchPort(port uint16) bool {
	if r.Port != 0 {
		return port == r.Port
	}
	for _, p := range defaultPorts {
		if p == port {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
