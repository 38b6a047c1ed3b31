package spec

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// Where the egress relay listens inside a container's network namespace
// (docs/network.md). The runtime creates these sockets there; the compiler
// points the container's programs at them. Only lo exists in that
// namespace, so every address is the container's own loopback.
const (
	// RelayProxyPort takes HTTP CONNECT, absolute-form HTTP and SOCKS5
	// (on 127.0.0.1, and ::1 when lo has it). 3128 is the port Squid made
	// the convention; nothing else in the namespace uses it.
	RelayProxyPort = 3128
	// RelayDNSPort is the DNS stub (UDP and TCP), the port resolvers ask.
	RelayDNSPort = 53
)

// RelayProxyAddr is the proxy port's IPv4 address, the one the proxy
// variables name.
var RelayProxyAddr = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), RelayProxyPort)

// RelayResolvConf is the resolv.conf a container with a relay gets over
// /etc/resolv.conf: the stub only, no search domain (a host's search
// domains would send the workload's short names to the host's networks'
// names), no options.
const RelayResolvConf = "# vetto-runtime: the egress relay's DNS stub (docs/network.md)\nnameserver 127.0.0.1\n"

// relayResolvFile is the resolv.conf's bundle-relative path.
const relayResolvFile = "vetto/resolv.conf"

// ProxyEnv is relay.ProxyEnv, which spec may not import (docs/architecture.md):
// the variables that point a container's programs at the proxy port at
// addr. TestProxyEnvAgreement in the root package keeps the two the same.
func ProxyEnv(addr netip.AddrPort) []string {
	host := addr.Addr().String()
	hostport := addr.String()
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

// network gives a container with a relay (mode allowlist or strict) the
// stub's resolv.conf, bound read-only over /etc/resolv.conf: a file in the
// bundle, like a stripped git config. A host-root bundle binds the host's
// /etc, so the file goes where the host's /etc/resolv.conf really is when
// that is a symlink into the system directories the sandbox sees; when it
// leads elsewhere (systemd-resolved's /run/…) or is missing, there is no
// mount point to bind on, which is said: the proxy variables and the
// relay still work, resolution inside does not.
func (c *compiler) network() {
	if c.plan.Network == "off" {
		return
	}
	dest := "/etc/resolv.conf"
	if c.in.Rootfs == "" {
		info := c.lookup(dest)
		views := c.views(info.Real)
		if info.Kind != PathFile || len(views) == 0 {
			c.warn("network: the host's /etc/resolv.conf is missing or leads outside the sandbox's system directories (%s): the sandbox gets no resolv.conf naming the relay's DNS stub; the proxy variables still reach it", info.Real)
			return
		}
		dest = views[0]
	}
	c.plan.Files = append(c.plan.Files, BundleFile{Path: relayResolvFile, Content: RelayResolvConf})
	c.addMount(&mountPlan{dest: dest, source: relayResolvFile, origin: "network " + c.plan.Network + ": the relay's DNS stub"})
}

// withRelayEnv puts the relay's proxy variables into env (sorted
// KEY=value) for a container with a relay. They replace what the caller
// passed under the same names: a pass_through of http_proxy must not send
// the workload somewhere else (and could not: the namespace has only lo).
// JAVA_TOOL_OPTIONS is the exception relay.ProxyEnv documents: the
// caller's options are kept and the relay's appended, so that the JVM,
// which takes the last of a repeated -D, uses the relay's.
func (c *compiler) withRelayEnv(env, passed []string) ([]string, []string) {
	if c.plan.Network == "off" {
		return env, passed
	}
	values := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		values[k] = v
	}
	for _, kv := range ProxyEnv(RelayProxyAddr) {
		k, v, _ := strings.Cut(kv, "=")
		if old, ok := values[k]; ok {
			if k == "JAVA_TOOL_OPTIONS" {
				v = old + " " + v
			} else if old != v {
				c.warn("environment: %s is set to the relay's proxy (network mode %q), not the caller's value", k, c.plan.Network)
			}
		}
		values[k] = v
	}
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	sort.Strings(names)
	env = env[:0:0]
	for _, k := range names {
		env = append(env, fmt.Sprintf("%s=%s", k, values[k]))
	}
	return env, names
}
