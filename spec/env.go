package spec

import (
	"fmt"
	"sort"
	"strings"
)

// alwaysPassed are taken from the caller's environment into every sandbox
// (HOME is set to Inputs.Home, PATH to a default when the caller has none):
// without them shells and most tools misbehave.
var alwaysPassed = []string{"PATH", "HOME", "TERM", "LANG"}

// defaultPath is PATH when the caller has none (Debian's for root).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Name patterns of variables that usually hold credentials. A name is
// checked upper-cased. This is a heuristic on names, not values: it catches
// GITHUB_TOKEN and AWS_SECRET_ACCESS_KEY, not a token someone put in FOO.
var (
	secretWords    = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE_KEY", "API_KEY", "APIKEY", "ACCESS_KEY"}
	secretSuffixes = []string{"_KEY", "_PASS", "_PWD", "_AUTH", "_COOKIE"}
	secretPrefixes = []string{"AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "CLOUDSDK_"}
	secretNames    = []string{"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "KRB5CCNAME", "DATABASE_URL"}
)

// LooksSecret reports whether an environment variable's name looks like it
// holds a credential (*_TOKEN, *_SECRET, *_KEY, *_PASSWORD, AWS_*, …) or
// a handle to one (SSH_AUTH_SOCK). Such variables never enter a sandbox,
// even when a policy lists them.
func LooksSecret(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return contains(secretNames, n)
}

// envEntry is one pass_through pattern and where it came from.
type envEntry struct {
	pattern string // NAME or PREFIX*
	origin  string
}

func (e envEntry) matches(name string) bool {
	if prefix, ok := strings.CutSuffix(e.pattern, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return name == e.pattern
}

// buildEnv rebuilds the sandbox's environment from the caller's: only the
// always-passed variables and those pass_through names, minus anything that
// looks secret. It returns the environment (sorted, KEY=value), the names
// dropped as secrets, and a warning for each.
func buildEnv(caller []string, home string, entries []envEntry) (env, passed, dropped, warnings []string) {
	values := map[string]string{}
	var names []string
	for _, kv := range caller {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		// The first of duplicates wins, as getenv(3) finds it.
		if _, dup := values[k]; !dup {
			names = append(names, k)
			values[k] = v
		}
	}
	sort.Strings(names)

	out := map[string]string{"HOME": home, "PATH": defaultPath}
	for _, k := range []string{"PATH", "TERM", "LANG"} {
		if v, ok := values[k]; ok {
			out[k] = v
		}
	}
	droppedSet := map[string]bool{}
	drop := func(name, why string) {
		if !droppedSet[name] {
			droppedSet[name] = true
			dropped = append(dropped, name)
			warnings = append(warnings, fmt.Sprintf("environment: %s is not passed: %s", name, why))
		}
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.pattern, "*") {
			if contains(alwaysPassed, e.pattern) {
				continue
			}
			if LooksSecret(e.pattern) {
				// Said even when the caller has no such variable: the
				// policy asks for something it will never get.
				drop(e.pattern, fmt.Sprintf("its name looks like a secret (listed at %s)", e.origin))
				continue
			}
			if v, ok := values[e.pattern]; ok {
				out[e.pattern] = v
			}
			continue
		}
		for _, name := range names {
			if !e.matches(name) || contains(alwaysPassed, name) {
				continue
			}
			if LooksSecret(name) {
				drop(name, fmt.Sprintf("its name looks like a secret (matched %s at %s)", e.pattern, e.origin))
				continue
			}
			out[name] = values[name]
		}
	}
	for k := range out {
		passed = append(passed, k)
	}
	sort.Strings(passed)
	for _, k := range passed {
		env = append(env, k+"="+out[k])
	}
	return env, passed, dropped, warnings
}
