package relay

import (
	"net/netip"
	"strings"
	"testing"
)

func TestProxyEnv(t *testing.T) {
	tests := []struct {
		addr string
		want []string
	}{
		{"127.0.0.1:3128", []string{
			"http_proxy=http://127.0.0.1:3128",
			"HTTP_PROXY=http://127.0.0.1:3128",
			"https_proxy=http://127.0.0.1:3128",
			"HTTPS_PROXY=http://127.0.0.1:3128",
			"ALL_PROXY=socks5h://127.0.0.1:3128",
			"all_proxy=socks5h://127.0.0.1:3128",
			"NO_PROXY=localhost,127.0.0.1,::1",
			"no_proxy=localhost,127.0.0.1,::1",
			"npm_config_proxy=http://127.0.0.1:3128",
			"npm_config_https_proxy=http://127.0.0.1:3128",
			"YARN_HTTP_PROXY=http://127.0.0.1:3128",
			"YARN_HTTPS_PROXY=http://127.0.0.1:3128",
			"NODE_USE_ENV_PROXY=1",
			"JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]",
		}},
		{"[::1]:8080", []string{
			"http_proxy=http://[::1]:8080",
			"HTTP_PROXY=http://[::1]:8080",
			"https_proxy=http://[::1]:8080",
			"HTTPS_PROXY=http://[::1]:8080",
			"ALL_PROXY=socks5h://[::1]:8080",
			"all_proxy=socks5h://[::1]:8080",
			"NO_PROXY=localhost,127.0.0.1,::1",
			"no_proxy=localhost,127.0.0.1,::1",
			"npm_config_proxy=http://[::1]:8080",
			"npm_config_https_proxy=http://[::1]:8080",
			"YARN_HTTP_PROXY=http://[::1]:8080",
			"YARN_HTTPS_PROXY=http://[::1]:8080",
			"NODE_USE_ENV_PROXY=1",
			"JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=[::1] -Dhttp.proxyPort=8080 -Dhttps.proxyHost=[::1] -Dhttps.proxyPort=8080 -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			got := ProxyEnv(netip.MustParseAddrPort(tt.addr))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, kv := range got {
				if strings.Contains(strings.ToLower(kv), "@") || strings.Contains(strings.ToLower(kv), "password") {
					t.Errorf("%s carries credentials", kv)
				}
			}
		})
	}
}
