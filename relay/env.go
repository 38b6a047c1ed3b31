package relay

import (
	"net/netip"
	"strconv"
)

// ProxyEnv returns the environment ("KEY=value", in a fixed order) that
// points a container's programs at the relay's proxy port at addr (inside
// the container's network namespace, typically 127.0.0.1:3128). It is
// pure, and it carries no credentials: the relay takes none.
//
//   - http_proxy, https_proxy and their upper-case forms: curl, wget, pip,
//     git, cargo, Go, Python requests, Ruby; https goes through CONNECT, so
//     both are http:// URLs.
//   - ALL_PROXY, all_proxy: socks5h:// (the h: the proxy resolves names,
//     the client never sends an address).
//   - NO_PROXY, no_proxy: loopback only, so nothing else bypasses the
//     relay.
//   - npm_config_proxy, npm_config_https_proxy, YARN_HTTP_PROXY,
//     YARN_HTTPS_PROXY: npm and yarn read their own.
//   - NODE_USE_ENV_PROXY=1: Node.js's fetch and http honour the variables
//     above only when asked to (Node 24 and later).
//   - JAVA_TOOL_OPTIONS: the JVM reads no variable, only system properties.
//     (A JVM prints "Picked up JAVA_TOOL_OPTIONS" on stderr.)
//
// Programs that ignore all of these still reach allowed names through the
// DNS stub and the transparent listeners.
func ProxyEnv(addr netip.AddrPort) []string {
	host := addr.Addr().String()
	hostport := addr.String() // brackets an IPv6 address
	port := strconv.Itoa(int(addr.Port()))
	javaHost := host
	if addr.Addr().Is6() {
		javaHost = "[" + host + "]"
	}
	proxy := "http://" + hostport
	noProxy := "localhost,127.0.0.1,::1"
	java := "-Dhttp.proxyHost=" + javaHost + " -Dhttp.proxyPort=" + port +
		" -Dhttps.proxyHost=" + javaHost + " -Dhttps.proxyPort=" + port +
		" -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]"
	return []string{
		"http_proxy=" + proxy,
		"HTTP_PROXY=" + proxy,
		"https_proxy=" + proxy,
		"HTTPS_PROXY=" + proxy,
		"ALL_PROXY=socks5h://" + hostport,
		"all_proxy=socks5h://" + hostport,
		"NO_PROXY=" + noProxy,
		"no_proxy=" + noProxy,
		"npm_config_proxy=" + proxy,
		"npm_config_https_proxy=" + proxy,
		"YARN_HTTP_PROXY=" + proxy,
		"YARN_HTTPS_PROXY=" + proxy,
		"NODE_USE_ENV_PROXY=1",
		"JAVA_TOOL_OPTIONS=" + java,
	}
}
