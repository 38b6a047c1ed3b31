package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Network allowlist rules are parsed twice: here, so that `policy check`
// and the launch evaluator can refuse a bad rule with its file and line
// before anything is built, and in relay.ParseRule, which the relay
// process applies. spec may import only the runtime spec and TOML
// (docs/architecture.md), and the relay's parser needs golang.org/x/net/idna, so
// the check is duplicated rather than shared; TestNetRuleAgreement in the
// root package runs both over one table and fails when they differ.
//
// The one difference is deliberate: spec takes ASCII only (write an
// internationalized name as its A-label, xn--…), and it checks an A-label's
// syntax, not its punycode, which only idna can decode. A rule with an
// invalid A-label passes here and is refused by the relay when it starts
// (the launch then fails with 125, naming the rule).

// ErrNetRule is wrapped by CheckNetRule's errors.
var ErrNetRule = errors.New("bad network rule")

// Network modes with an egress relay (dev.vetto.net).
const (
	NetAllowlist = "allowlist"
	NetStrict    = "strict"
)

// CheckNetRule reports whether text is a network.allow rule the relay
// accepts: example.com, *.example.com, example.com:8443 or
// *.example.com:22. It refuses, quoting the rule: an empty rule, a scheme,
// path or space, "*." or "*" without a domain, a wildcard over a top-level
// domain, '*' anywhere but the whole first label, empty labels (a..b), a
// trailing dot, a port outside 1-65535 or with a sign or leading zero, an
// IP literal or a name that reads as one (127.1, 0x7f.1), userinfo, and
// anything but ASCII letters, digits, '-' and '.'.
func CheckNetRule(text string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("rule %q: %w: %s", text, ErrNetRule, fmt.Sprintf(format, a...))
	}
	if text == "" {
		return bad("empty")
	}
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			return bad("not ASCII: write an internationalized name as its A-label (xn--…)")
		}
	}
	if strings.Contains(text, "/") || strings.ContainsAny(text, " \t\r\n") {
		return bad("not a host: write example.com, *.example.com or host:port, without a scheme or path")
	}
	if _, err := netip.ParseAddr(text); err == nil || strings.HasPrefix(text, "[") {
		return bad("an IP address: rules name hosts, and IP literals are always refused")
	}
	host := text
	if i := strings.LastIndexByte(text, ':'); i >= 0 {
		if !validPort(text[i+1:]) {
			return bad("port must be 1-65535, without a sign or leading zero (got %q)", text[i+1:])
		}
		host = text[:i]
	}
	wildcard := false
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		wildcard, host = true, rest
		if host == "" {
			return bad("wildcard without a domain: write *.example.com")
		}
	}
	if strings.Contains(host, "*") {
		return bad("'*' is allowed only as the whole first label (*.example.com)")
	}
	if strings.HasSuffix(host, ".") {
		return bad("trailing dot: write the name without it")
	}
	if err := checkHostName(host); err != nil {
		return bad("%v", err)
	}
	if wildcard && !strings.Contains(host, ".") {
		return bad("a wildcard over the top-level domain %q allows all of it: name the domain (*.example.%s)", host, host)
	}
	return nil
}

// CheckNetStrictRule is CheckNetRule plus what mode strict demands: an
// exact host:port.
func CheckNetStrictRule(text string) error {
	if err := CheckNetRule(text); err != nil {
		return err
	}
	host, _, hasPort := strings.Cut(text, ":")
	if strings.HasPrefix(host, "*.") || !hasPort {
		return fmt.Errorf("rule %q: %w: mode %q allows only exact host:port rules", text, ErrNetRule, NetStrict)
	}
	return nil
}

// checkHostName applies relay.NormalizeName's rules to an ASCII name
// without its root dot: letters, digits, '-' and '.'; no empty label, no
// label over 63 bytes or starting or ending with '-'; at most 253 bytes;
// and a last label that inet_aton would not read as a number.
func checkHostName(n string) error {
	if n == "" {
		return errors.New("no host")
	}
	for i := 0; i < len(n); i++ {
		switch c := n[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.':
		case c == '@':
			return errors.New("carries userinfo")
		case c == ':':
			return errors.New("contains ':' (a port is not part of a name)")
		default:
			return fmt.Errorf("character %q", c)
		}
	}
	if len(n) > 253 {
		return errors.New("longer than 253")
	}
	labels := strings.Split(n, ".")
	for _, l := range labels {
		switch {
		case l == "":
			return errors.New("empty label")
		case len(l) > 63:
			return errors.New("label longer than 63")
		case l[0] == '-' || l[len(l)-1] == '-':
			return fmt.Errorf("label %q starts or ends with '-'", l)
		}
	}
	if numericLabel(strings.ToLower(labels[len(labels)-1])) {
		return errors.New("reads as an IP address: rules name hosts, and IP literals are always refused")
	}
	return nil
}

// numericLabel: all decimal digits, or "0x" and hex digits — what
// inet_aton reads as a number, so a name ending in one is an address to
// glibc, curl and browsers.
func numericLabel(l string) bool {
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		for i := 0; i < len(rest); i++ {
			if c := rest[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return l != ""
}

// validPort: 1-5 decimal digits, no sign, no leading zero, 1-65535.
func validPort(s string) bool {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n >= 1 && n <= 65535
}

// NetAnnotations reads a spec's network mode (dev.vetto.net) and allowlist
// (dev.vetto.net.allow, a JSON array of rules). relay is false for the
// modes without an egress relay (unset, "off", "none"); for allowlist and
// strict it checks every rule as the policy parser does and reports every
// problem at once. Any other mode is an error.
func NetAnnotations(annotations map[string]string) (mode string, allow []string, relay bool, err error) {
	mode = annotations[AnnotationNet]
	switch mode {
	case "", "off", "none":
		return mode, nil, false, nil
	case NetAllowlist, NetStrict:
	default:
		return mode, nil, false, fmt.Errorf("annotation %s: unknown network mode %q (want off, %s or %s)", AnnotationNet, mode, NetAllowlist, NetStrict)
	}
	text, ok := annotations[AnnotationNetAllow]
	if !ok {
		return mode, nil, true, fmt.Errorf("annotation %s: mode %q needs rules in %s", AnnotationNet, mode, AnnotationNetAllow)
	}
	if err := json.Unmarshal([]byte(text), &allow); err != nil {
		return mode, nil, true, fmt.Errorf("annotation %s: want a JSON array of rules: %w", AnnotationNetAllow, err)
	}
	if len(allow) == 0 {
		return mode, nil, true, fmt.Errorf("annotation %s: empty: mode %q needs at least one rule", AnnotationNetAllow, mode)
	}
	check := CheckNetRule
	if mode == NetStrict {
		check = CheckNetStrictRule
	}
	var errs []error
	for i, r := range allow {
		if err := check(r); err != nil {
			errs = append(errs, fmt.Errorf("annotation %s[%d]: %w", AnnotationNetAllow, i, err))
		}
	}
	return mode, allow, true, errors.Join(errs...)
}
