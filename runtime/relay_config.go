package runtime

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"sort"
)

// DefaultRelayUID is the uid and gid the egress relay runs as when
// runtime.toml names none: nobody, which owns no file.
const DefaultRelayUID = 65534

// RelayConfig is runtime.toml's [relay]: the operator's settings of the
// egress relay (docs/network.md). None of it ever comes from a bundle: a
// bundle that could name test hosts or exempt ranges could reach the
// host's own networks.
//
//	[relay]
//	resolvers = ["192.0.2.53", "[2001:db8::53]:53"]  # default: the host's /etc/resolv.conf
//	uid = 65534                                      # the relay's unprivileged uid and gid
//	check_sni = false                                # allowlist checks SNI as strict does
//	exempt = ["10.213.0.2/32"]                       # test upstreams: pass the deny set
//	ca_file = "/etc/vetto/relay-ca.pem"              # credentials' upstreams; default: the system's roots
//	credential_dirs = ["/etc/vetto/credentials"]     # where credential files may be
//	[relay.test_hosts]
//	"up.example.test" = ["10.213.0.2"]               # answered instead of DNS
type RelayConfig struct {
	Resolvers []string            `toml:"resolvers"`
	TestHosts map[string][]string `toml:"test_hosts"`
	Exempt    []string            `toml:"exempt"`
	// UID is the relay's uid and gid; 0 (unset) means DefaultRelayUID.
	// The relay is never root.
	UID      uint32 `toml:"uid"`
	CheckSNI bool   `toml:"check_sni"`
	// CAFile verifies the TLS upstreams of credentials (a PEM bundle);
	// empty: the system's roots.
	CAFile string `toml:"ca_file"`
	// CredentialDirs are where a bundle's credential files may be;
	// empty: DefaultCredentialDirs.
	CredentialDirs []string `toml:"credential_dirs"`
}

// validate checks what is syntax here; the relay checks the rest (an
// exempt range too broad, a test host's name) when it starts, with
// relay.NewConfig, and a bad value refuses that launch.
func (rc *RelayConfig) validate(path string) error {
	var errs []error
	fail := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("operator config %s: [relay] %s", path, fmt.Sprintf(format, a...)))
	}
	for i, r := range rc.Resolvers {
		if _, err := netip.ParseAddrPort(r); err != nil {
			if _, err := netip.ParseAddr(r); err != nil {
				fail("resolvers[%d] %q: want an address or address:port", i, r)
			}
		}
	}
	names := make([]string, 0, len(rc.TestHosts))
	for n := range rc.TestHosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if len(rc.TestHosts[n]) == 0 {
			fail("test_hosts %q: no addresses", n)
		}
		for _, a := range rc.TestHosts[n] {
			if _, err := netip.ParseAddr(a); err != nil {
				fail("test_hosts %q: %q is not an address", n, a)
			}
		}
	}
	if rc.CAFile != "" && !filepath.IsAbs(rc.CAFile) {
		fail("ca_file %q: want an absolute path", rc.CAFile)
	}
	for i, d := range rc.CredentialDirs {
		if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
			fail("credential_dirs[%d] %q: want an absolute directory other than /", i, d)
		}
	}
	for i, p := range rc.Exempt {
		if _, err := netip.ParsePrefix(p); err != nil {
			fail("exempt[%d] %q: want a prefix (10.213.0.0/24)", i, p)
		}
	}
	return errors.Join(errs...)
}

// relayUID is [relay] uid, DefaultRelayUID without a config or a uid.
func (c *Config) relayUID() uint32 {
	if c == nil || c.Relay.UID == 0 {
		return DefaultRelayUID
	}
	return c.Relay.UID
}

// relay is the config's [relay], empty without a config.
func (c *Config) relay() RelayConfig {
	if c == nil {
		return RelayConfig{}
	}
	return c.Relay
}
