package relay

import (
	"net/netip"
	"testing"
)

// TestJudge covers every row of the deny set, the IPv6 forms that embed
// an IPv4 address, and addresses that must pass.
func TestJudge(t *testing.T) {
	tests := []struct {
		addr string
		want string // the denial id; "" means allowed
	}{
		// IPv4, one or more per row.
		{"169.254.169.254", "cloud-metadata"},
		{"100.100.100.200", "cloud-metadata"},
		{"255.255.255.255", "broadcast"},
		{"0.0.0.0", "this-network"},
		{"0.1.2.3", "this-network"},
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"100.64.0.1", "cgnat"},
		{"100.127.255.254", "cgnat"},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"169.254.1.1", "link-local"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.0.0.8", "ietf-protocol"},
		{"192.0.2.1", "documentation"},
		{"192.88.99.1", "6to4-relay"},
		{"192.168.1.1", "private"},
		{"198.18.0.1", "benchmark"},
		{"198.19.255.255", "benchmark"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"224.0.0.251", "multicast"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"254.1.2.3", "reserved"},
		// IPv4 edges that pass.
		{"8.8.8.8", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"198.17.255.255", ""},
		{"198.20.0.0", ""},
		{"223.255.255.255", ""},
		{"1.1.1.1", ""},
		// IPv6 rows.
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"fd00:ec2::254", "cloud-metadata"},
		{"fc00::1", "ula"},
		{"fd12:3456::1", "ula"},
		{"fe80::1", "link-local"},
		{"febf::1", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"ff05::1:3", "multicast"},
		{"2001:db8::1", "documentation"},
		{"3fff::1", "documentation"},
		{"2001:2::1", "benchmark"},
		{"100::1", "discard"},
		{"64:ff9b:1::a00:1", "nat64-local"},
		{"4000::1", "not-global"},
		{"::2:0:0:1", "not-global"},
		// Embedded IPv4, judged by it.
		{"::ffff:127.0.0.1", "v4-mapped:loopback"},
		{"::ffff:169.254.169.254", "v4-mapped:cloud-metadata"},
		{"::ffff:10.0.0.1", "v4-mapped:private"},
		{"::ffff:8.8.8.8", ""},
		{"::127.0.0.1", "v4-compatible:loopback"},
		{"::8.8.8.8", "v4-compatible"},
		{"64:ff9b::127.0.0.1", "nat64:loopback"},
		{"64:ff9b::a9fe:a9fe", "nat64:cloud-metadata"},
		{"64:ff9b::192.168.0.1", "nat64:private"},
		{"64:ff9b::8.8.8.8", ""},
		{"2002:7f00:1::1", "6to4:loopback"},
		{"2002:a00:1::1", "6to4:private"},
		{"2002:808:808::1", ""},
		// Teredo: server 65.54.227.120 (public), client = ^last 32 bits.
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "teredo:loopback"},      // client ^80fffffe = 127.0.0.1
		{"2001:0:a00:1:8000:63bf:3fff:fdd2", "teredo:private"},           // server 10.0.0.1
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo:documentation"}, // RFC 4380 example: client 192.0.2.45
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", ""},                     // client 8.8.8.8: both public
		// Global unicast passes.
		{"2606:4700::1111", ""},
		{"2a00:1450:4001::200e", ""},
		// Zones never pass.
		{"fe80::1%eth0", "zone"},
		{"2606:4700::1111%eth0", "zone"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			d, ok := judge(netip.MustParseAddr(tt.addr))
			if tt.want == "" {
				if !ok {
					t.Fatalf("judge(%s) = denied %s (%s), want allowed", tt.addr, d.id, d.why)
				}
				return
			}
			if ok || d.id != tt.want {
				t.Fatalf("judge(%s) = %q allowed=%v, want denied %q", tt.addr, d.id, ok, tt.want)
			}
			if d.why == "" {
				t.Errorf("judge(%s): no reason", tt.addr)
			}
		})
	}
}

func TestConfigJudge(t *testing.T) {
	cfg := mustConfig(t, Settings{
		Mode: ModeAllowlist, Allow: []string{"example.com"},
		HostAddrs: []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("2606:2800:220:1::1")},
		Exempt:    []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.99.0.0/16")},
	})
	tests := []struct {
		addr string
		want string
	}{
		{"93.184.216.34", "host-address"},
		{"::ffff:93.184.216.34", "host-address"},
		{"2606:2800:220:1::1", "host-address"},
		{"93.184.216.35", ""},
		{"127.0.0.1", ""},         // exempt
		{"::ffff:127.0.0.1", ""},  // exempt, mapped
		{"127.0.0.2", "loopback"}, // exemption is exact
		{"10.99.3.4", ""},         // exempt test network
		{"10.98.0.1", "private"},  // not in it
		{"169.254.169.254", "cloud-metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			d, ok := cfg.judge(netip.MustParseAddr(tt.addr))
			if tt.want == "" && !ok {
				t.Fatalf("judge(%s) = denied %s, want allowed", tt.addr, d.id)
			}
			if tt.want != "" && (ok || d.id != tt.want) {
				t.Fatalf("judge(%s) = %q allowed=%v, want denied %q", tt.addr, d.id, ok, tt.want)
			}
		})
	}
}
