package spec

import (
	"sort"
)

// Profile is a built-in starting point a policy extends. A policy adds to
// it: more readable, writable and denied paths, more variables, its own
// network and limits. It never removes a profile's denies (an allowed path
// inside one is an error) and never lowers its security level.
type Profile struct {
	Name    string
	Summary string
	// Level is the floor: a policy may raise it, not lower it.
	Level   string
	Network string
	// ProjectWritable mounts $PROJECT read-write; audit reads it only.
	ProjectWritable bool
	Memory          int64 // bytes; 0 = no limit
	Pids            int64 // 0 = no limit
	CPU             float64
	AllowRead       []string
	Deny            []string
	// AllowDegraded are the degradations the compiled bundle accepts of
	// what it asks for itself (dev.vetto.allow-degraded): at standard, a
	// Landlock ruleset the kernel enforces only in part (an older ABI) runs
	// with each missing right named on the launch line; strict takes none.
	AllowDegraded []string
}

// secretDenies are masked by every profile: where credentials live on a
// developer machine or a CI runner. A path that does not exist, or is not
// visible in the sandbox, costs nothing. Secret-shaped files and sockets
// under every readable root are found by the caller's scan (Inputs.Found)
// and masked too.
var secretDenies = []string{
	// Credentials of cloud CLIs, registries, package indexes, VCS hosts.
	"$HOME/.ssh",
	"$HOME/.aws",
	"$HOME/.azure",
	"$HOME/.oci",
	"$HOME/.config/gcloud",
	"$HOME/.config/doctl",
	"$HOME/.config/hcloud",
	"$HOME/.kube",
	"$HOME/.minikube",
	"$HOME/.docker",
	"$HOME/.config/containers/auth.json",
	"$HOME/.netrc",
	"$HOME/.gnupg",
	"$HOME/.git-credentials",
	"$HOME/.config/git/credentials",
	"$HOME/.config/gh",
	"$HOME/.config/hub",
	"$HOME/.npmrc",
	"$HOME/.yarnrc.yml",
	"$HOME/.pypirc",
	"$HOME/.gem/credentials",
	"$HOME/.cargo/credentials",
	"$HOME/.cargo/credentials.toml",
	"$HOME/.composer/auth.json",
	"$HOME/.config/composer/auth.json",
	"$HOME/.gradle/gradle.properties",
	"$HOME/.m2/settings-security.xml",
	"$HOME/.terraform.d/credentials.tfrc.json",
	"$HOME/.terraform.d/credentials",
	"$HOME/.pulumi/credentials.json",
	"$HOME/.vault-token",
	"$HOME/.pgpass",
	"$HOME/.my.cnf",
	"$HOME/.s3cfg",
	"$HOME/.boto",
	"$HOME/.config/rclone/rclone.conf",
	"$HOME/.password-store",
	"$HOME/.local/share/keyrings",
	"$HOME/.config/op",
	// Coding agents' own credentials: the agent in the sandbox must not
	// read its operator's tokens.
	"$HOME/.claude/.credentials.json",
	"$HOME/.codex/auth.json",
	"$HOME/.gemini/oauth_creds.json",
	"$HOME/.config/github-copilot",
	// Shell and REPL histories: pasted tokens end up there.
	"$HOME/.bash_history",
	"$HOME/.zsh_history",
	"$HOME/.local/share/fish/fish_history",
	"$HOME/.psql_history",
	"$HOME/.mysql_history",
	"$HOME/.python_history",
	"$HOME/.node_repl_history",
	"$HOME/.sqlite_history",
	"$HOME/.rediscli_history",
	// The host's own secrets, readable through the read-only /etc of a
	// host-root bundle by a container root that keeps CAP_DAC_OVERRIDE
	// (masked although the sandbox is never host root: a mask does not
	// depend on the file's mode being right).
	"/etc/shadow",
	"/etc/shadow-",
	"/etc/gshadow",
	"/etc/gshadow-",
	"/etc/sudoers",
	"/etc/sudoers.d",
	"/etc/security/opasswd",
	"/etc/ssh/ssh_host_dsa_key",
	"/etc/ssh/ssh_host_ecdsa_key",
	"/etc/ssh/ssh_host_ed25519_key",
	"/etc/ssh/ssh_host_rsa_key",
	"/etc/ssl/private",
	"/etc/pki/tls/private",
	"/etc/letsencrypt",
	"/etc/krb5.keytab",
	"/etc/wireguard",
	"/etc/NetworkManager/system-connections",
	"/etc/kubernetes",
	"/etc/rancher",
	"/etc/docker/key.json",
}

// strictDenies are masked at strict on top of secretDenies: configuration
// that is not a credential but tells an attacker about the host.
var strictDenies = []string{
	"/etc/ssh",
	"/etc/vetto",
}

const (
	gib = 1 << 30
)

var profiles = map[string]*Profile{
	"default": {
		Name:            "default",
		AllowDegraded:   []string{"landlock"},
		Summary:         "everyday agents and CI jobs: the project read-write, the host's system read-only, secrets masked, no network",
		Level:           "standard",
		Network:         "off",
		ProjectWritable: true,
		Memory:          4 * gib,
		Pids:            1024,
		Deny:            secretDenies,
	},
	"strict": {
		Name:            "strict",
		Summary:         "code nobody vouches for: as default, with no capabilities, tighter limits, more of /etc masked, and level strict (no degraded feature allowed)",
		Level:           "strict",
		Network:         "off",
		ProjectWritable: true,
		Memory:          2 * gib,
		Pids:            256,
		CPU:             2,
		Deny:            append(append([]string{}, secretDenies...), strictDenies...),
	},
	"audit": {
		Name:            "audit",
		AllowDegraded:   []string{"landlock"},
		Summary:         "review and analysis: the project read-only; only /tmp and a throwaway $HOME are writable",
		Level:           "standard",
		Network:         "off",
		ProjectWritable: false,
		Memory:          4 * gib,
		Pids:            1024,
		Deny:            secretDenies,
	},
	"permissive": {
		Name:            "permissive",
		AllowDegraded:   []string{"landlock"},
		Summary:         "trusted tools that need the user's settings: as default, with $HOME readable (secrets still masked) and larger limits",
		Level:           "standard",
		Network:         "off",
		ProjectWritable: true,
		Memory:          16 * gib,
		Pids:            8192,
		AllowRead:       []string{"$HOME"},
		Deny:            secretDenies,
	},
}

// LookupProfile returns the built-in profile called name.
func LookupProfile(name string) (*Profile, bool) {
	p, ok := profiles[name]
	return p, ok
}

// profileNames lists the built-in profiles, sorted.
func profileNames() []string {
	out := make([]string, 0, len(profiles))
	for n := range profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ProfileNames lists the built-in profiles, sorted.
func ProfileNames() []string { return profileNames() }

// levelRank orders security levels, weakest first.
func levelRank(level string) int {
	for i, l := range securityLevels {
		if l == level {
			return i
		}
	}
	return -1
}
