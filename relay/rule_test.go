package relay

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		text string
		want Rule
		err  string // "": want success; else a substring of the error
	}{
		{"example.com", Rule{Host: "example.com"}, ""},
		{"Example.COM", Rule{Host: "example.com"}, ""},
		{"*.example.com", Rule{Host: "example.com", Wildcard: true}, ""},
		{"example.com:8443", Rule{Host: "example.com", Port: 8443}, ""},
		{"*.example.com:8443", Rule{Host: "example.com", Wildcard: true, Port: 8443}, ""},
		{"bücher.de", Rule{Host: "xn--bcher-kva.de"}, ""},
		{"xn--bcher-kva.de", Rule{Host: "xn--bcher-kva.de"}, ""},
		{"", Rule{}, "empty"},
		{"*.", Rule{}, "wildcard without a domain"},
		{"*", Rule{}, "'*'"},
		{"*.com", Rule{}, "top-level domain"},
		{"a.*.com", Rule{}, "'*'"},
		{"*example.com", Rule{}, "'*'"},
		{"a..b", Rule{}, "empty label"},
		{"example.com.", Rule{}, "trailing dot"},
		{"example.com:0", Rule{}, "1-65535"},
		{"example.com:65536", Rule{}, "1-65535"},
		{"example.com:http", Rule{}, "1-65535"},
		{"example.com:", Rule{}, "1-65535"},
		{"127.0.0.1", Rule{}, "IP"},
		{"127.0.0.1:80", Rule{}, "IP"},
		{"127.1", Rule{}, "IP"},
		{"2130706433", Rule{}, "IP"},
		{"::1", Rule{}, "IP"},
		{"[::1]:443", Rule{}, "IP"},
		{"fe80::1%eth0", Rule{}, "IP"},
		{"https://example.com", Rule{}, "scheme"},
		{"example.com/path", Rule{}, "scheme"},
		{"user@example.com", Rule{}, "userinfo"},
		{"exa mple.com", Rule{}, "scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := ParseRule(tt.text)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseRule(%q) = %+v, %v; want %+v", tt.text, got, err, tt.want)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "rule "+quote(tt.text)) {
				t.Fatalf("ParseRule(%q) = %+v, %v; want ErrBadRule naming the rule and saying %q", tt.text, got, err, tt.err)
			}
		})
	}
}

func quote(s string) string { return `"` + s + `"` }

func TestRuleString(t *testing.T) {
	for _, text := range []string{"example.com", "*.example.com", "example.com:8443", "*.example.com:22"} {
		r, err := ParseRule(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.String(); got != text {
			t.Errorf("ParseRule(%q).String() = %q, want it back", text, got)
		}
	}
}

func TestMatch(t *testing.T) {
	cfg := mustConfig(t, Settings{Mode: ModeAllowlist, Allow: []string{"exact.test", "*.wild.test", "port.test:8443", "both.test", "both.test:8080"}})
	tests := []struct {
		name string
		host string
		port uint16
		ok   bool
	}{
		{"exact on 443", "exact.test", 443, true},
		{"exact on 80", "exact.test", 80, true},
		{"exact on 22", "exact.test", 22, false},
		{"exact does not cover subdomains", "a.exact.test", 443, false},
		{"wildcard subdomain", "a.wild.test", 443, true},
		{"wildcard deep subdomain", "a.b.wild.test", 443, true},
		{"wildcard not the apex", "wild.test", 443, false},
		{"wildcard suffix without dot", "evilwild.test", 443, false},
		{"port rule on its port", "port.test", 8443, true},
		{"port rule not on 443", "port.test", 443, false},
		{"bare and port rules add up: 443", "both.test", 443, true},
		{"bare and port rules add up: 8080", "both.test", 8080, true},
		{"bare and port rules add up: not 8443", "both.test", 8443, false},
		{"other name", "other.test", 443, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, _ := cfg.match(tt.host, tt.port)
			if ok != tt.ok {
				t.Fatalf("match(%s, %d) = %v, want %v", tt.host, tt.port, ok, tt.ok)
			}
		})
	}
}

func mustConfig(t testing.TB, s Settings) *Config {
	t.Helper()
	c, err := NewConfig(s)
	if err != nil {
		t.Fatalf("NewConfig: %v", err)
	}
	return c
}

func TestNewConfigErrors(t *testing.T) {
	ok := Settings{Mode: ModeAllowlist, Allow: []string{"example.com"}}
	tests := []struct {
		name     string
		edit     func(*Settings)
		sentinel error
		want     []string // every one must be in the error
	}{
		{"unknown mode", func(s *Settings) { s.Mode = "open" }, ErrBadSettings, []string{`mode "open"`}},
		{"mode off", func(s *Settings) { s.Mode = "off" }, ErrBadSettings, []string{`mode "off": needs no relay`}},
		{"empty allowlist", func(s *Settings) { s.Allow = nil }, ErrBadRule, []string{"allow: empty"}},
		{"every bad rule reported", func(s *Settings) { s.Allow = []string{"ok.com", "*.", "a..b", "x.com:99999", "10.0.0.1"} },
			ErrBadRule, []string{`allow[1]: rule "*."`, `allow[2]: rule "a..b"`, `allow[3]: rule "x.com:99999"`, `allow[4]: rule "10.0.0.1"`}},
		{"strict needs a port", func(s *Settings) { s.Mode = ModeStrict; s.Allow = []string{"example.com"} }, ErrBadRule, []string{`allow[0]: rule "example.com"`, "exact host:port"}},
		{"strict refuses wildcards", func(s *Settings) { s.Mode = ModeStrict; s.Allow = []string{"*.example.com:443"} }, ErrBadRule, []string{`"*.example.com:443"`, "exact host:port"}},
		{"bad resolver", func(s *Settings) { s.Resolvers = []string{"dns.google"} }, ErrBadSettings, []string{`resolvers[0] "dns.google"`}},
		{"test host that is not a name", func(s *Settings) { s.TestHosts = map[string][]netip.Addr{"127.1": {netip.MustParseAddr("127.0.0.1")}} }, ErrBadSettings, []string{`test_hosts "127.1"`}},
		{"test host without addresses", func(s *Settings) { s.TestHosts = map[string][]netip.Addr{"up.test": nil} }, ErrBadSettings, []string{`test_hosts "up.test": no addresses`}},
		{"exempt not masked", func(s *Settings) { s.Exempt = []netip.Prefix{netip.MustParsePrefix("10.1.2.3/8")} }, ErrBadSettings, []string{"exempt[0] 10.1.2.3/8", "10.0.0.0/8"}},
		{"exempt everything", func(s *Settings) { s.Exempt = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")} }, ErrBadSettings, []string{"too broad"}},
		{"fake range outside loopback", func(s *Settings) { s.FakeRange = netip.MustParsePrefix("10.77.0.0/16") }, ErrBadSettings, []string{"fake_range"}},
		{"fake range too small", func(s *Settings) { s.FakeRange = netip.MustParsePrefix("127.77.0.0/25") }, ErrBadSettings, []string{"fake_range"}},
		{"negative timeout", func(s *Settings) { s.IdleTimeout = -time.Second }, ErrBadSettings, []string{"idle_timeout"}},
		{"negative max conns", func(s *Settings) { s.MaxConns = -1 }, ErrBadSettings, []string{"max_conns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.edit(&s)
			c, err := NewConfig(s)
			if err == nil {
				t.Fatalf("NewConfig = %+v, nil; want an error", c)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("got %v, want it to wrap %v", err, tt.sentinel)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
		})
	}
	if _, err := NewConfig(ok); err != nil {
		t.Fatalf("NewConfig(%+v) = %v, want success", ok, err)
	}
}

func TestNewConfigDefaults(t *testing.T) {
	c := mustConfig(t, Settings{Mode: ModeStrict, Allow: []string{"example.com:443"}, Resolvers: []string{"192.0.2.53", "[2001:db8::53]:5353"}})
	if !c.checkSNI {
		t.Errorf("strict: checkSNI = false, want true")
	}
	if c.maxConns != DefaultMaxConns || c.handshake != DefaultHandshakeTimeout || c.idle != DefaultIdleTimeout || c.dialTimeout != DefaultDialTimeout {
		t.Errorf("limits = %d %s %s %s, want the defaults", c.maxConns, c.handshake, c.idle, c.dialTimeout)
	}
	if c.fakeRange != netip.MustParsePrefix("127.77.0.0/16") {
		t.Errorf("fake range = %s, want 127.77.0.0/16", c.fakeRange)
	}
	want := []netip.AddrPort{netip.MustParseAddrPort("192.0.2.53:53"), netip.MustParseAddrPort("[2001:db8::53]:5353")}
	if len(c.resolvers) != 2 || c.resolvers[0] != want[0] || c.resolvers[1] != want[1] {
		t.Errorf("resolvers = %v, want %v", c.resolvers, want)
	}
	if c.Mode() != ModeStrict || len(c.Rules()) != 1 || c.Rules()[0].String() != "example.com:443" {
		t.Errorf("Mode, Rules = %s, %v", c.Mode(), c.Rules())
	}
}
