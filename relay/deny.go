package relay

import (
	"fmt"
	"net/netip"
)

// denyRange is one row of the deny set: addresses no answer may carry,
// whatever the rules say. The name is the rule id in a denial
// ("deny-set:loopback").
type denyRange struct {
	prefix netip.Prefix
	name   string
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// denyV4 is checked in order, most specific first, so that the metadata
// endpoints are named as such and not as the link-local or CGNAT range
// around them. Sources: the IANA IPv4 Special-Purpose Address Registry
// (RFC 6890) plus the cloud metadata addresses.
var denyV4 = []denyRange{
	{mustPrefix("169.254.169.254/32"), "cloud-metadata"}, // AWS, GCP, Azure, OpenStack
	{mustPrefix("100.100.100.200/32"), "cloud-metadata"}, // Alibaba Cloud
	{mustPrefix("255.255.255.255/32"), "broadcast"},
	{mustPrefix("0.0.0.0/8"), "this-network"},
	{mustPrefix("10.0.0.0/8"), "private"},
	{mustPrefix("100.64.0.0/10"), "cgnat"},
	{mustPrefix("127.0.0.0/8"), "loopback"},
	{mustPrefix("169.254.0.0/16"), "link-local"},
	{mustPrefix("172.16.0.0/12"), "private"},
	{mustPrefix("192.0.0.0/24"), "ietf-protocol"},
	{mustPrefix("192.0.2.0/24"), "documentation"},
	{mustPrefix("192.88.99.0/24"), "6to4-relay"},
	{mustPrefix("192.168.0.0/16"), "private"},
	{mustPrefix("198.18.0.0/15"), "benchmark"},
	{mustPrefix("198.51.100.0/24"), "documentation"},
	{mustPrefix("203.0.113.0/24"), "documentation"},
	{mustPrefix("224.0.0.0/4"), "multicast"},
	{mustPrefix("240.0.0.0/4"), "reserved"},
}

// denyV6 is checked after the forms that embed an IPv4 address (see
// judgeV6). Anything outside 2000::/3, the only block IANA allocates for
// global unicast, is refused as well (fail closed on what the table does
// not name).
var denyV6 = []denyRange{
	{mustPrefix("fd00:ec2::254/128"), "cloud-metadata"}, // AWS over IPv6
	{mustPrefix("::/128"), "unspecified"},
	{mustPrefix("::1/128"), "loopback"},
	{mustPrefix("64:ff9b:1::/48"), "nat64-local"}, // RFC 8215: local-use, like a private range
	{mustPrefix("100::/64"), "discard"},
	{mustPrefix("2001:2::/48"), "benchmark"},
	{mustPrefix("2001:db8::/32"), "documentation"},
	{mustPrefix("3fff::/20"), "documentation"},
	{mustPrefix("fc00::/7"), "ula"},
	{mustPrefix("fe80::/10"), "link-local"},
	{mustPrefix("fec0::/10"), "site-local"},
	{mustPrefix("ff00::/8"), "multicast"},
}

var (
	globalUnicast = mustPrefix("2000::/3")
	v4Mapped      = mustPrefix("::ffff:0:0/96")
	v4Compatible  = mustPrefix("::/96")
	nat64         = mustPrefix("64:ff9b::/96")
	sixToFour     = mustPrefix("2002::/16")
	teredo        = mustPrefix("2001::/32")
)

// denial is why an address is in the deny set: id names the range (the
// rule id after "deny-set:"), why is the sentence for people.
type denial struct {
	id, why string
}

// judge returns the deny-set row the address falls in, or ok. It knows
// nothing of the host or the operator's exemptions (Config.judge adds
// those).
func judge(a netip.Addr) (denial, bool) {
	if !a.IsValid() {
		return denial{"invalid", "not an address"}, false
	}
	if a.Zone() != "" {
		return denial{"zone", fmt.Sprintf("%s carries a zone: link-scoped", a)}, false
	}
	if a.Is4() {
		return judgeV4(a)
	}
	return judgeV6(a)
}

func judgeV4(a netip.Addr) (denial, bool) {
	for _, r := range denyV4 {
		if r.prefix.Contains(a) {
			return denial{r.name, fmt.Sprintf("%s is %s (%s)", a, r.name, r.prefix)}, false
		}
	}
	return denial{}, true
}

// judgeV6 judges the IPv6 forms that carry an IPv4 address by that IPv4
// address: an answer of ::ffff:127.0.0.1, 64:ff9b::a9fe:a9fe or
// 2002:7f00:1:: reaches the embedded address as surely as the literal.
func judgeV6(a netip.Addr) (denial, bool) {
	b := a.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	embedded := func(form string, e netip.Addr) (denial, bool) {
		if d, ok := judgeV4(e); !ok {
			return denial{form + ":" + d.id, fmt.Sprintf("%s embeds %s (%s): %s", a, e, form, d.why)}, false
		}
		return denial{}, true
	}
	switch {
	case a == netip.IPv6Unspecified() || a == netip.IPv6Loopback():
		// Inside ::/96 but named as themselves (the table below).
	case v4Mapped.Contains(a):
		return embedded("v4-mapped", a.Unmap())
	case v4Compatible.Contains(a):
		// Deprecated (RFC 4291 §2.5.5.1) and routed nowhere sane.
		if d, ok := embedded("v4-compatible", v4(12)); !ok {
			return d, false
		}
		return denial{"v4-compatible", fmt.Sprintf("%s is an IPv4-compatible address (deprecated)", a)}, false
	case nat64.Contains(a):
		return embedded("nat64", v4(12))
	case sixToFour.Contains(a):
		return embedded("6to4", v4(2))
	case teredo.Contains(a):
		// RFC 4380: the server's address in bits 32-63, the client's,
		// inverted, in the last 32.
		if d, ok := embedded("teredo", v4(4)); !ok {
			return d, false
		}
		c := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return embedded("teredo", c)
	}
	for _, r := range denyV6 {
		if r.prefix.Contains(a) {
			return denial{r.name, fmt.Sprintf("%s is %s (%s)", a, r.name, r.prefix)}, false
		}
	}
	if !globalUnicast.Contains(a) {
		return denial{"not-global", fmt.Sprintf("%s is outside global unicast (2000::/3)", a)}, false
	}
	return denial{}, true
}
