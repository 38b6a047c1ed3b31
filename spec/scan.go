package spec

import (
	"bufio"
	"net/url"
	"strings"
)

// Policy mode assumes a hostile workload inside the user's own project
// (docs/policy.md): what it finds there that it could read (secrets, host
// sockets) is masked, and what it could change that later runs code on
// the host (repository metadata, editor and dev-container settings) is
// read-only. The caller walks the readable roots (hostpolicy.Scan) and
// hands the compiler what it found; the rules of what counts live here,
// pure, so that spec time and create time judge alike.

// FoundKind is what a path found under a readable root is.
type FoundKind int

const (
	// FoundSecret is a file whose name says it holds credentials: masked.
	FoundSecret FoundKind = iota
	// FoundSocket is a host unix socket: masked, so nothing inside can
	// connect to it (an ssh-agent, a docker socket).
	FoundSocket
	// FoundRepo is a repository's git directory (.git, or a submodule's
	// gitdir): its metadata is read-only and it cannot be renamed away.
	FoundRepo
	// FoundGitFile is a .git file pointing at a gitdir: read-only, or the
	// sandbox could point the host's git at a gitdir it wrote.
	FoundGitFile
	// FoundToolConfig is configuration another program runs code from
	// when the user opens the project: read-only.
	FoundToolConfig
)

func (k FoundKind) String() string {
	return [...]string{"secret", "socket", "repository", "git file", "tool config"}[k]
}

// Found is one path a scan found, on the host.
type Found struct {
	Path string
	Kind FoundKind
	// Meta are, for a repository, the metadata paths that exist in its
	// git directory (config, hooks, info, config.worktree).
	Meta []string `json:",omitempty"`
}

// secretFileNames are file names that hold credentials by convention, besides
// the dotenv files (IsEnvFile): direnv's .envrc (exported tokens), npm's
// and PyPI's rc files (auth tokens), netrc, git's credential store, libpq's
// and MySQL's password files, Vault's token.
var secretFileNames = map[string]bool{
	".envrc": true, ".npmrc": true, ".pypirc": true, ".netrc": true, ".git-credentials": true,
	".pgpass": true, ".my.cnf": true, ".vault-token": true, ".dockercfg": true,
}

// IsSecretFile reports whether a file named name holds credentials by
// convention.
func IsSecretFile(name string) bool { return IsEnvFile(name) || secretFileNames[name] }

// toolConfigDirs hold settings editors and dev-container tools act on when
// the user opens the project: VS Code's tasks (runOn: folderOpen) and
// settings (interpreter and tool paths), JetBrains' run configurations,
// dev containers' lifecycle commands.
var toolConfigDirs = map[string]bool{".vscode": true, ".idea": true, ".devcontainer": true}

// RepoMetadata are the entries of a git directory from which git runs
// code on the host: config (core.fsmonitor, core.hooksPath, core.pager,
// core.sshCommand, filter and diff drivers, aliases, include.path),
// config.worktree, hooks/ and info/ (attributes that select drivers).
// git commit, branch, tag, stash and gc write none of them.
var RepoMetadata = []string{"config", "config.worktree", "hooks", "info"}

// Classify says what a directory entry is to the scan: name is its base
// name, dir and socket its type. ok is false for an ordinary entry. A
// directory named .git is reported by the caller as FoundRepo with the
// RepoMetadata it has.
func Classify(name string, dir, socket bool) (FoundKind, bool) {
	switch {
	case socket:
		return FoundSocket, true
	case name == ".git" && dir:
		return FoundRepo, true
	case name == ".git":
		return FoundGitFile, true
	case dir && toolConfigDirs[name]:
		return FoundToolConfig, true
	case !dir && name == ".gitmodules":
		return FoundToolConfig, true
	case !dir && IsSecretFile(name):
		return FoundSecret, true
	}
	return 0, false
}

// StripGitCredentials returns a git config without the credentials it
// may carry: userinfo in remote URLs (https://user:token@host/…) and HTTP
// headers (http.<url>.extraheader, where CI checkouts keep an
// Authorization token). changed is false when there was nothing to strip.
// The sandbox reads the stripped copy; git still works with it.
func StripGitCredentials(config string) (stripped string, changed bool) {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(config))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		key, value, isKV := strings.Cut(strings.TrimSpace(line), "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if isKV {
			switch {
			case key == "extraheader":
				changed = true
				continue
			case key == "url" || key == "pushurl" || key == "insteadof" || key == "pushinsteadof":
				if clean, ok := withoutUserinfo(strings.TrimSpace(value)); ok {
					indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
					line = indent + key + " = " + clean
					changed = true
				}
			}
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String(), changed
}

// withoutUserinfo removes the userinfo of a URL with a password or a
// token-shaped user ("https://x-access-token:ghs_…@host/…",
// "https://ghp_…@host/…"); ok is false when there is none.
func withoutUserinfo(raw string) (string, bool) {
	u, err := url.Parse(strings.Trim(raw, `"`))
	if err != nil || u.User == nil || u.Host == "" {
		return raw, false
	}
	if _, hasPassword := u.User.Password(); !hasPassword && !LooksSecretValue(u.User.Username()) {
		return raw, false
	}
	u.User = nil
	return u.String(), true
}
