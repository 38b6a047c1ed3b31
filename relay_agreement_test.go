package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/vetto-dev/vetto-runtime/relay"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// spec cannot import relay (docs/architecture.md), so the policy compiler checks
// network rules and writes the proxy variables with its own copies of the
// relay's code. These tests keep the copies and the originals the same.

// netRules is the table both parsers judge: every rule form the relay's
// own tests and docs/network.md name, and their near misses.
var netRules = []string{
	"example.com", "EXAMPLE.com", "*.example.com", "example.com:8443", "*.example.com:22", "example.com:1", "example.com:65535",
	"localhost", "com", "a", "a-b.com", "a--b.com", "r3---sn-abc.googlevideo.com", "1a.com", "a.1b", "0x.com", "a.0xg",
	"xn--bcher-kva.de", "*.xn--bcher-kva.de:443", "sub.sub.sub.example.com",
	"", "*", "*.", "*.com", "*.com:443", "*.*.a.com", "a.*.com", "*a.com", "a*.com", "**.a.com",
	"a..b", ".a.com", "a.com.", "a.com..", "*.a.com.", "a.com:", "a.com:0", "a.com:00", "a.com:0443", "a.com:+443", "a.com:-1",
	"a.com:65536", "a.com:99999", "a.com:123456", "a.com:1:2", "a.com:443.b.com", "a.com:http",
	"http://a.com", "a.com/x", "a.com/", "a com", "a.com ", "\ta.com", "a.com\n",
	"1.2.3.4", "1.2.3.4:80", "169.254.169.254", "127.1", "127.0.1", "0x7f.1", "0x7f000001", "0177.0.0.1", "017700000001",
	"2130706433", "a.2130706433", "a.0x1F", "A.0X1F", "*.1.2.3.4", "*.10.0.0.1:443",
	"::1", "[::1]", "[::1]:443", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]:80", "64:ff9b::a9fe:a9fe", "fe80::1%eth0", "2001:db8::1",
	"u@a.com", "u:p@a.com", "a@b", "a_b.com", "a!.com", "a%2e.com", "a.com%eth0",
	"-a.com", "a-.com", "a.-b.com", "a.b-.com", strings.Repeat("a", 63) + ".com", strings.Repeat("a", 64) + ".com",
	strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 127) + "a",
	"bücher.de", "ÉXAMPLE.com", "a．com", "ａ.com", "аpple.com",
}

// TestNetRuleAgreement: spec.CheckNetRule accepts exactly the ASCII rules
// relay.ParseRule accepts. Non-ASCII rules are the one deliberate
// difference: spec refuses them (write the A-label), the relay converts.
func TestNetRuleAgreement(t *testing.T) {
	for _, rule := range netRules {
		_, relayErr := relay.ParseRule(rule)
		specErr := spec.CheckNetRule(rule)
		ascii := !strings.ContainsFunc(rule, func(r rune) bool { return r >= 0x80 })
		switch {
		case !ascii && specErr == nil:
			t.Errorf("spec.CheckNetRule(%q) accepts a non-ASCII rule", rule)
		case ascii && (relayErr == nil) != (specErr == nil):
			t.Errorf("rule %q: relay.ParseRule: %v; spec.CheckNetRule: %v", rule, relayErr, specErr)
		}
		// Strict mode: host:port only, on both sides.
		_, relayStrict := relay.NewConfig(relay.Settings{Mode: relay.ModeStrict, Allow: []string{rule}})
		if specStrict := spec.CheckNetStrictRule(rule); ascii && (relayStrict == nil) != (specStrict == nil) {
			t.Errorf("strict rule %q: relay: %v; spec: %v", rule, relayStrict, specStrict)
		}
	}
}

// FuzzNetRuleAgreement extends the table with whatever the fuzzer makes
// of it (go test -fuzz FuzzNetRuleAgreement).
func FuzzNetRuleAgreement(f *testing.F) {
	for _, r := range netRules {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, rule string) {
		if strings.ContainsFunc(rule, func(r rune) bool { return r >= 0x80 }) {
			if spec.CheckNetRule(rule) == nil {
				t.Fatalf("spec.CheckNetRule(%q) accepts a non-ASCII rule", rule)
			}
			return
		}
		_, relayErr := relay.ParseRule(rule)
		specErr := spec.CheckNetRule(rule)
		if relayErr == nil && specErr != nil && strings.Contains(rule, "xn--") {
			t.Fatalf("rule %q: the relay accepts an A-label spec refuses: %v", rule, specErr)
		}
		if (relayErr == nil) != (specErr == nil) && !strings.Contains(strings.ToLower(rule), "xn--") {
			t.Fatalf("rule %q: relay.ParseRule: %v; spec.CheckNetRule: %v", rule, relayErr, specErr)
		}
	})
}

// An invalid A-label is the one ASCII rule spec passes and the relay
// refuses (spec has no punycode decoder): the relay then refuses to start,
// and the launch fails naming the rule.
func TestNetRuleALabelDifference(t *testing.T) {
	const rule = "xn--zz.com"
	if err := spec.CheckNetRule(rule); err != nil {
		t.Fatalf("spec.CheckNetRule(%q) = %v; the documented difference changed, update spec/netrule.go", rule, err)
	}
	if _, err := relay.ParseRule(rule); err == nil {
		t.Fatalf("relay.ParseRule(%q) accepts an invalid A-label", rule)
	}
}

// TestProxyEnvAgreement: the compiler writes relay.ProxyEnv's variables.
func TestProxyEnvAgreement(t *testing.T) {
	for _, addr := range []netip.AddrPort{spec.RelayProxyAddr, netip.MustParseAddrPort("[::1]:3128"), netip.MustParseAddrPort("127.0.0.2:8080")} {
		if got, want := spec.ProxyEnv(addr), relay.ProxyEnv(addr); !slices.Equal(got, want) {
			t.Errorf("spec.ProxyEnv(%s) = %q\nrelay.ProxyEnv = %q", addr, got, want)
		}
	}
}
