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
	secretWords    = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE_KEY", "API_KEY", "APIKEY", "ACCESS_KEY", "CONFIG_DATA"}
	secretSuffixes = []string{"_KEY", "_PASS", "_PWD", "_AUTH", "_COOKIE", "_PAT", "_DSN"}
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

// tokenShapes are the prefixes of credentials with a recognizable shape:
// GitHub's (classic, OAuth, user, server, refresh, fine-grained), GitLab's,
// Slack's, npm's, PyPI's, OpenAI's and Anthropic's API keys, Google API
// keys, AWS access key ids (long-lived and temporary), Hugging Face's.
var tokenShapes = []struct {
	prefix string
	min    int // the shortest value with this prefix that is a token
}{
	{"ghp_", 20}, {"gho_", 20}, {"ghu_", 20}, {"ghs_", 20}, {"ghr_", 20}, {"github_pat_", 30},
	{"glpat-", 20}, {"xoxb-", 15}, {"xoxa-", 15}, {"xoxp-", 15}, {"xoxs-", 15}, {"xapp-", 15},
	{"npm_", 30}, {"pypi-", 40}, {"sk-ant-", 20}, {"sk-", 20}, {"AIza", 35}, {"AKIA", 20}, {"ASIA", 20}, {"hf_", 30},
}

// LooksSecretValue reports, with the shape it matched, whether a value
// looks like a credential whatever its variable is called: a URL whose
// userinfo has a password (https_proxy=http://u:p@…, REDIS_URL=redis://:p@…,
// CI_REPOSITORY_URL with a job token), a token with a known prefix, a JWT,
// or a PEM private key. It is a heuristic: it errs towards dropping.
func LooksSecretValue(v string) bool {
	_, ok := secretValueShape(v)
	return ok
}

func secretValueShape(v string) (string, bool) {
	if strings.Contains(v, "PRIVATE KEY-----") {
		return "a PEM private key", true
	}
	for _, field := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '"' || r == '\'' }) {
		if i := strings.Index(field, "://"); i > 0 {
			rest := field[i+3:]
			if at := strings.IndexByte(rest, '@'); at > 0 {
				if slash := strings.IndexByte(rest, '/'); slash < 0 || slash > at {
					if user, pass, hasPass := strings.Cut(rest[:at], ":"); (hasPass && pass != "") || looksToken(user) {
						return "a URL with credentials", true
					}
				}
			}
		}
		if looksToken(field) {
			return "a token", true
		}
		if looksJWT(field) {
			return "a JWT", true
		}
	}
	return "", false
}

func looksToken(s string) bool {
	for _, t := range tokenShapes {
		if strings.HasPrefix(s, t.prefix) && len(s) >= t.min && tokenChars(s[len(t.prefix):]) {
			return true
		}
	}
	return false
}

func tokenChars(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// looksJWT: three base64url segments, the first a JSON header ("eyJ").
func looksJWT(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "eyJ") || len(s) < 40 {
		return false
	}
	for _, p := range parts {
		if p == "" || !tokenChars(p) {
			return false
		}
	}
	return true
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
		if v, ok := values[k]; ok && !LooksSecretValue(v) {
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
				if shape, bad := secretValueShape(v); bad {
					drop(e.pattern, fmt.Sprintf("its value looks like a secret (%s)", shape))
					continue
				}
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
			if shape, bad := secretValueShape(values[name]); bad {
				drop(name, fmt.Sprintf("its value looks like a secret (%s; matched %s at %s)", shape, e.pattern, e.origin))
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
