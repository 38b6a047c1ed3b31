package relay

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"time"
)

// ErrBadSettings is wrapped by NewConfig's errors about anything but a rule.
var ErrBadSettings = errors.New("bad relay settings")

// Mode is the container's network mode (the dev.vetto.net annotation).
type Mode string

const (
	// ModeAllowlist: names matching a rule, on the rule's port or on 80
	// and 443. SNI is checked only when Settings.CheckSNI is set.
	ModeAllowlist Mode = "allowlist"
	// ModeStrict: exact host:port rules only, and every tunnel must open
	// with a TLS ClientHello whose SNI is the tunnel's host.
	ModeStrict Mode = "strict"
)

// Defaults for the zero values of Settings' limits.
const (
	DefaultMaxConns         = 512
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultIdleTimeout      = 5 * time.Minute
	DefaultDialTimeout      = 10 * time.Second
)

// resolveTimeout bounds one resolution; maxHeaderBytes one HTTP request
// or response head (request line and headers); maxPinned the names the
// server remembers answers for.
const (
	resolveTimeout = 5 * time.Second
	maxHeaderBytes = 16 << 10
	maxPinned      = 4096
)

// Settings is everything the relay is told. Mode and Allow come from the
// bundle (dev.vetto.net, dev.vetto.net.allow); everything else is the
// operator's (runtime.toml), never a bundle's: a bundle that could set
// TestHosts or Exempt could reach the host.
type Settings struct {
	Mode  Mode
	Allow []string // rules as written; see ParseRule
	// CheckSNI makes allowlist mode check, like strict, that a tunnel
	// opening with a TLS ClientHello names its host in the SNI (a
	// ClientHello without SNI, or a stream that is not TLS, still passes
	// at allowlist). Strict always checks, and requires TLS.
	CheckSNI bool

	// Resolvers are the upstream DNS servers ("192.0.2.53", "[2001:db8::53]:53"),
	// asked with Go's own resolver. Empty: the host's /etc/resolv.conf,
	// which a relay without file-system rights cannot read, so the runtime
	// should pass them.
	Resolvers []string
	// HostAddrs are the host's own interface addresses: never dialled.
	HostAddrs []netip.Addr
	// TestHosts answers these names from the map instead of DNS (operator
	// test upstreams). The deny set still applies to the addresses.
	TestHosts map[string][]netip.Addr
	// Exempt prefixes pass the deny set (and HostAddrs): the operator's
	// test networks. Each must be a network address, /8 or longer for
	// IPv4 and /16 or longer for IPv6.
	Exempt []netip.Prefix
	// FakeRange is where the DNS stub's addresses come from, one per
	// allowed name, inside 127.0.0.0/8; at most /24. Zero: 127.77.0.0/16.
	FakeRange netip.Prefix

	MaxConns         int           // concurrent client connections; 0: DefaultMaxConns
	HandshakeTimeout time.Duration // to read a request head, a SOCKS5 handshake or a ClientHello
	IdleTimeout      time.Duration // a tunnel or keep-alive connection with no bytes either way
	DialTimeout      time.Duration // one upstream connect

	// Credentials are headers the relay adds to plain HTTP requests for
	// their hosts, which it forwards over TLS (credential.go). Each host
	// must be allowed on the credential's port.
	Credentials []Credential
	// RootCAs verify the TLS upstreams of credentials; nil: the system's
	// roots (which a relay without file-system rights cannot read, so the
	// runtime passes them).
	RootCAs *x509.CertPool
}

// Config is validated Settings. It is immutable and safe to share.
type Config struct {
	mode      Mode
	rules     []Rule
	checkSNI  bool
	resolvers []netip.AddrPort
	hostAddrs map[netip.Addr]bool
	testHosts map[string][]netip.Addr
	exempt    []netip.Prefix
	fakeRange netip.Prefix

	maxConns                     int
	handshake, idle, dialTimeout time.Duration

	creds   map[string]*credential // by normalized host
	rootCAs *x509.CertPool
}

// NewConfig validates s and returns the relay's configuration. It is pure.
// Every violation is reported, not the first: the error is an errors.Join
// of errors wrapping ErrBadRule (naming the rule by its index and text) or
// ErrBadSettings (naming the setting).
func NewConfig(s Settings) (*Config, error) {
	var errs []error
	fail := func(sentinel error, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, a...)))
	}
	c := &Config{mode: s.Mode, checkSNI: s.CheckSNI || s.Mode == ModeStrict, hostAddrs: map[netip.Addr]bool{}, testHosts: map[string][]netip.Addr{}, creds: map[string]*credential{}}
	switch s.Mode {
	case ModeAllowlist, ModeStrict:
	case "off":
		fail(ErrBadSettings, "mode %q: needs no relay (the container has loopback only)", s.Mode)
	default:
		fail(ErrBadSettings, "mode %q: want %q or %q", s.Mode, ModeAllowlist, ModeStrict)
	}
	if len(s.Allow) == 0 {
		fail(ErrBadRule, "allow: empty: mode %q needs at least one rule", s.Mode)
	}
	for i, text := range s.Allow {
		r, err := ParseRule(text)
		if err != nil {
			errs = append(errs, fmt.Errorf("allow[%d]: %w", i, err))
			continue
		}
		if s.Mode == ModeStrict && (r.Wildcard || r.Port == 0) {
			errs = append(errs, fmt.Errorf("allow[%d]: rule %q: %w: mode %q allows only exact host:port rules", i, text, ErrBadRule, ModeStrict))
			continue
		}
		c.rules = append(c.rules, r)
	}
	for i, text := range s.Resolvers {
		ap, err := netip.ParseAddrPort(text)
		if err != nil {
			a, err2 := netip.ParseAddr(text)
			if err2 != nil {
				fail(ErrBadSettings, "resolvers[%d] %q: want an address or address:port", i, text)
				continue
			}
			ap = netip.AddrPortFrom(a, 53)
		}
		if ap.Port() == 0 {
			fail(ErrBadSettings, "resolvers[%d] %q: port 0", i, text)
			continue
		}
		c.resolvers = append(c.resolvers, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	for i, a := range s.HostAddrs {
		if !a.IsValid() {
			fail(ErrBadSettings, "host_addrs[%d]: not an address", i)
			continue
		}
		c.hostAddrs[a.WithZone("").Unmap()] = true
	}
	names := make([]string, 0, len(s.TestHosts))
	for name := range s.TestHosts {
		names = append(names, name)
	}
	sort.Strings(names) // report in a stable order
	for _, name := range names {
		addrs := s.TestHosts[name]
		n, err := NormalizeName(name)
		if err != nil {
			fail(ErrBadSettings, "test_hosts %q: %v", name, err)
			continue
		}
		if len(addrs) == 0 {
			fail(ErrBadSettings, "test_hosts %q: no addresses", name)
			continue
		}
		for _, a := range addrs {
			if !a.IsValid() || a.Zone() != "" {
				fail(ErrBadSettings, "test_hosts %q: address %q: want an address without a zone", name, a)
				continue
			}
			c.testHosts[n] = append(c.testHosts[n], a.Unmap())
		}
	}
	for i, pfx := range s.Exempt {
		switch {
		case !pfx.IsValid():
			fail(ErrBadSettings, "exempt[%d]: not a prefix", i)
		case pfx != pfx.Masked():
			fail(ErrBadSettings, "exempt[%d] %s: not the network address (did you mean %s?)", i, pfx, pfx.Masked())
		case pfx.Addr().Is4() && pfx.Bits() < 8, pfx.Addr().Is6() && pfx.Bits() < 16:
			fail(ErrBadSettings, "exempt[%d] %s: too broad: exempt the test network, not the deny set", i, pfx)
		default:
			c.exempt = append(c.exempt, pfx)
		}
	}
	c.fakeRange = s.FakeRange
	if !c.fakeRange.IsValid() {
		c.fakeRange = mustPrefix("127.77.0.0/16")
	}
	if !c.fakeRange.Addr().Is4() || c.fakeRange != c.fakeRange.Masked() || c.fakeRange.Bits() < 8 || c.fakeRange.Bits() > 24 || !mustPrefix("127.0.0.0/8").Contains(c.fakeRange.Addr()) {
		fail(ErrBadSettings, "fake_range %s: want a network inside 127.0.0.0/8 of /24 or larger", s.FakeRange)
	}
	durations := []struct {
		name string
		in   time.Duration
		out  *time.Duration
		def  time.Duration
	}{
		{"handshake_timeout", s.HandshakeTimeout, &c.handshake, DefaultHandshakeTimeout},
		{"idle_timeout", s.IdleTimeout, &c.idle, DefaultIdleTimeout},
		{"dial_timeout", s.DialTimeout, &c.dialTimeout, DefaultDialTimeout},
	}
	for _, d := range durations {
		switch {
		case d.in < 0:
			fail(ErrBadSettings, "%s %s: negative", d.name, d.in)
		case d.in == 0:
			*d.out = d.def
		default:
			*d.out = d.in
		}
	}
	switch {
	case s.MaxConns < 0:
		fail(ErrBadSettings, "max_conns %d: negative", s.MaxConns)
	case s.MaxConns == 0:
		c.maxConns = DefaultMaxConns
	default:
		c.maxConns = s.MaxConns
	}
	c.checkCredentials(s, fail)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// Mode is the network mode.
func (c *Config) Mode() Mode { return c.mode }

// Rules are the parsed rules, in the order given.
func (c *Config) Rules() []Rule { return append([]Rule(nil), c.rules...) }

// judge applies the deny set as this configuration sees it: exempt
// prefixes pass, the host's own addresses do not, and the rest is judge.
func (c *Config) judge(a netip.Addr) (denial, bool) {
	u := a.Unmap()
	if a.Zone() == "" {
		for _, pfx := range c.exempt {
			if pfx.Contains(u) {
				return denial{}, true
			}
		}
	}
	if c.hostAddrs[u.WithZone("")] {
		return denial{"host-address", fmt.Sprintf("%s is an address of the host", u)}, false
	}
	return judge(a)
}

// match finds the rule that allows name on port. When none does, it says
// whether some rule names the host on another port (so the denial can say
// "port", not "no rule").
func (c *Config) match(name string, port uint16) (r Rule, ok, nameKnown bool) {
	for _, r := range c.rules {
		if r.matchName(name) {
			if r.matchPort(port) {
				return r, true, true
			}
			nameKnown = true
		}
	}
	return Rule{}, false, nameKnown
}

// allowsName reports whether any rule names the host, on any port: what
// the DNS stub answers for.
func (c *Config) allowsName(name string) (Rule, bool) {
	for _, r := range c.rules {
		if r.matchName(name) {
			return r, true
		}
	}
	return Rule{}, false
}
