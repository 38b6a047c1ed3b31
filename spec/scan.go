package spec

import (
	"bufio"
	"net/url"
	"slices"
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
	// FoundRepo is a git directory: a .git, a submodule's gitdir, or a
	// bare repository (any directory git takes for one by what it holds):
	// its metadata is read-only and it cannot be renamed away.
	FoundRepo
	// FoundGitFile is a .git file pointing at a gitdir: read-only, or the
	// sandbox could point the host's git at a gitdir it wrote.
	FoundGitFile
	// FoundToolConfig is configuration another program runs code from
	// when the user opens the project, or commits in it: read-only.
	FoundToolConfig
	// FoundHooksDir is a directory a repository's core.hooksPath names
	// (GitHooksPath), whose scripts git runs: read-only, and made empty
	// when it does not exist, or the sandbox could make it.
	FoundHooksDir
)

func (k FoundKind) String() string {
	return [...]string{"secret", "socket", "repository", "git file", "tool config", "hooks directory"}[k]
}

// Found is one path a scan found, on the host.
type Found struct {
	Path string
	Kind FoundKind
	// Meta are, for a repository, the metadata paths that exist in its
	// git directory (config, hooks, info, config.worktree).
	Meta []string `json:",omitempty"`
	// Missing are, for a repository, the metadata paths git would read
	// that its git directory lacks (MissingRepoMetadata): the compiler
	// has them made empty (Plan.Make) and read-only, since the sandbox
	// could otherwise plant them.
	Missing []string `json:",omitempty"`
}

// repoMetadataDirs are the RepoMetadata entries that are directories.
var repoMetadataDirs = map[string]bool{"hooks": true, "info": true}

// IsRepoMetadataDir says whether RepoMetadata entry name is a directory.
func IsRepoMetadataDir(name string) bool { return repoMetadataDirs[name] }

// MissingRepoMetadata lists the RepoMetadata entries a git directory
// lacks (it has those in have) that git would read if the sandbox made
// them: config and hooks/ always (go-git, JGit and `git init
// --template=` make no hooks/), info/, and config.worktree when the
// repository turns on extensions.worktreeConfig (WorktreeConfigOn),
// without which git never reads it.
func MissingRepoMetadata(have []string, worktreeConfig bool) []string {
	var out []string
	for _, m := range RepoMetadata {
		if slices.Contains(have, m) {
			continue
		}
		if m == "config.worktree" && !worktreeConfig {
			continue
		}
		out = append(out, m)
	}
	return out
}

// WorktreeConfigOn reads extensions.worktreeConfig from a git config: a
// boolean (a key alone means true).
func WorktreeConfigOn(config string) bool {
	value, ok := GitConfigValue(config, "extensions", "worktreeconfig")
	if !ok {
		return false
	}
	switch strings.ToLower(value) {
	case "", "true", "yes", "on", "1":
		return true
	}
	return false
}

// GitHooksPath reads core.hooksPath from a git config.
func GitHooksPath(config string) (string, bool) {
	v, ok := GitConfigValue(config, "core", "hookspath")
	return v, ok && v != ""
}

// GitConfigValue reads the last value of section.key (both lower case;
// no subsection) from a git config, as git does for a single-valued key:
// the last one wins. A key alone, with no "=", has the value "". Quotes
// are removed; includes are not followed.
func GitConfigValue(config, section, key string) (string, bool) {
	current := ""
	sc := bufio.NewScanner(strings.NewReader(config))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	value, found := "", false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			current = strings.ToLower(strings.TrimSpace(line[1:end]))
			line = strings.TrimSpace(line[end+1:])
		}
		if current != section || line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		if !strings.EqualFold(strings.TrimSpace(k), key) {
			continue
		}
		value, found = gitConfigUnquote(v), true
	}
	return value, found
}

// gitConfigUnquote is a git config value as git reads it: quotes removed,
// an unquoted # or ; starting a comment, outer spaces trimmed.
func gitConfigUnquote(v string) string {
	var b strings.Builder
	quoted := false
	for _, r := range strings.TrimSpace(v) {
		switch {
		case r == '"':
			quoted = !quoted
		case !quoted && (r == '#' || r == ';'):
			return strings.TrimSpace(b.String())
		default:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
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
// dev containers' lifecycle commands; Zed's tasks; coding agents' project
// settings (their hooks and MCP servers are commands the agent runs on
// the host the next time the user starts it there); and .husky, the
// scripts husky's hook stubs run at git commit.
var toolConfigDirs = map[string]bool{
	".vscode": true, ".idea": true, ".devcontainer": true, ".zed": true,
	".claude": true, ".cursor": true, ".gemini": true, ".codex": true,
	".husky": true,
}

// toolConfigFiles say what the hooks of a hook manager run at git commit:
// pre-commit's and overcommit's (lefthook's: isLefthookConfig);
// .gitmodules (where git clones submodules from, and their update
// commands); a dev container's file form (initializeCommand runs on the
// host); and the MCP servers a coding agent starts (.mcp.json).
var toolConfigFiles = map[string]bool{
	".gitmodules": true, ".pre-commit-config.yaml": true, ".overcommit.yml": true,
	".devcontainer.json": true, ".mcp.json": true,
}

// isLefthookConfig: lefthook reads lefthook.yml, .lefthook.yml, their
// -local variants, and .yaml, .json, .jsonc and .toml for .yml.
func isLefthookConfig(name string) bool {
	base := strings.TrimPrefix(name, ".")
	stem, ext, ok := strings.Cut(base, ".")
	if !ok || (stem != "lefthook" && stem != "lefthook-local") {
		return false
	}
	switch ext {
	case "yml", "yaml", "json", "jsonc", "toml":
		return true
	}
	return false
}

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
	case !dir && (toolConfigFiles[name] || isLefthookConfig(name)):
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
