//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Policy mode against a hostile agent (the policy-mode issue, 12.1–12.8):
// each test is the attack of one hole, run for real, judged from the host.

// gitIn runs git in dir on the host with a clean environment.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v: %s", args, dir, err, out)
	}
	return string(out)
}

// gitProject makes a project that is a git repository with a hook and a
// commit.
func gitProject(e *env) string {
	e.t.Helper()
	p := policyProject(e)
	gitIn(e.t, p, "init", "-q")
	if err := os.WriteFile(filepath.Join(p, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	gitIn(e.t, p, "add", "README")
	gitIn(e.t, p, "commit", "-qm", "first")
	return p
}

// 12.1: the bundle and the policy are out of the sandbox's reach.
func TestPolicyBundleOutOfReach(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	// spec refuses to write a bundle the sandbox could rewrite.
	for _, b := range []string{p, filepath.Join(p, "sub")} {
		if err := os.MkdirAll(b, 0o755); err != nil {
			t.Fatal(err)
		}
		r := e.vetto("spec", "--profile", "default", "--project", p, "--bundle", b, "--", "true")
		if r.code != 125 || !strings.Contains(r.stderr, "which the sandbox can write") {
			t.Fatalf("spec --bundle %s inside the project: %s; want 125", b, r)
		}
		if _, err := os.Stat(filepath.Join(b, "config.json")); err == nil {
			t.Fatalf("a refused spec wrote %s/config.json", b)
		}
	}
	// A bundle inside the project made some other way (what the old
	// default --bundle . gave): create refuses it at every level, before
	// its process can rewrite config.json for the next run.
	out, _ := e.compilePolicy("extends = \"default\"\n", p, "echo '{}' > config.json; touch RAN")
	inside := filepath.Join(p, "bundle")
	if err := exec.Command("cp", "-a", out, inside).Run(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(inside, "config.json"))
	for _, level := range []string{"standard", "degraded"} {
		id := e.id()
		r := e.vetto("run", "--security-level", level, "-b", inside, id)
		if r.code != 125 || !strings.Contains(r.stderr, "[bundle.self-writable]") {
			t.Fatalf("run at %s of a bundle inside its own writable project: %s; want 125 naming bundle.self-writable", level, r)
		}
		e.assertNothingLeft(id)
	}
	if after, _ := os.ReadFile(filepath.Join(inside, "config.json")); string(after) != string(before) {
		t.Fatal("the refused bundle's config.json changed")
	}
	if _, err := os.Stat(filepath.Join(p, "RAN")); err == nil {
		t.Fatal("the refused bundle's process ran")
	}
	// A policy file inside the project: a warning at standard, refused at
	// strict.
	policy := filepath.Join(p, "agent.toml")
	if err := os.WriteFile(policy, []byte("extends = \"default\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := e.tmpBundle()
	if r := e.mustVetto("spec", "--policy", policy, "--project", p, "--bundle", b, "--", "true"); !strings.Contains(r.stderr, "the sandbox can write") {
		t.Errorf("no warning for a policy inside the project: %q", r.stderr)
	}
	if err := os.WriteFile(policy, []byte("extends = \"strict\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.vetto("spec", "--policy", policy, "--project", p, "--bundle", e.tmpBundle(), "--", "true"); r.code != 125 {
		t.Errorf("a strict policy inside the project: %s; want 125", r)
	}
}

// 12.1, 12.7: policy check refuses writable system roots and a whole
// $HOME, even under extends = "strict"; spec refuses a project of /, $HOME
// or a system directory unless told so by name.
func TestPolicyRefusesWritingTheHost(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	home := filepath.Join(e.tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"/", "/etc", "/usr", "/root", "/boot", "/lib", "$HOME"} {
		file := filepath.Join(e.tmp, "w.toml")
		if err := os.WriteFile(file, []byte(fmt.Sprintf("extends = \"strict\"\n[filesystem]\nallow_write = [%q]\n", w)), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, "policy", "check", "--project", p, file)
		cmd.Env = append(os.Environ(), "HOME="+home)
		r := e.runCmd(cmd)
		if r.code == 0 || !strings.Contains(r.stderr, "unsafe for the host") {
			t.Errorf("policy check of allow_write %s: %s; want refused", w, r)
		}
	}
	for _, proj := range []string{"/", "/etc", "/usr", "/tmp", "/var", home} {
		cmd := exec.Command(binary, "spec", "--profile", "default", "--project", proj, "--bundle", e.tmpBundle(), "--", "true")
		cmd.Env = append(os.Environ(), "HOME="+home)
		if r := e.runCmd(cmd); r.code != 125 || !strings.Contains(r.stderr, "--dangerously-allow-project") {
			t.Errorf("spec --project %s: %s; want 125 naming the flag", proj, r)
		}
	}
	cmd := exec.Command(binary, "spec", "--profile", "default", "--dangerously-allow-project", "--project", home, "--bundle", e.tmpBundle(), "--", "true")
	cmd.Env = append(os.Environ(), "HOME="+home)
	if r := e.runCmd(cmd); r.code != 0 {
		t.Errorf("spec --project $HOME with --dangerously-allow-project: %s", r)
	}
}

// tmpBundle is a fresh directory for a bundle, outside every project.
func (e *env) tmpBundle() string {
	e.t.Helper()
	b, err := os.MkdirTemp(e.tmp, "bundle-")
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// 12.2: the sandbox is never host root on host files. It cannot plant a
// set-id file or file capabilities for a host user to run, root-only host
// files are unreadable by DAC (not only by masks), and what it creates in
// the project belongs to the project's owner.
func TestPolicySandboxIsNotHostRoot(t *testing.T) {
	for _, owner := range []int{1000, 0} {
		t.Run(fmt.Sprintf("project owned by %d", owner), func(t *testing.T) {
			e := newEnv(t)
			p := policyProject(e)
			rootOnly := filepath.Join(e.tmp, "rootonly")
			if err := os.MkdirAll(rootOnly, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(rootOnly, "key"), []byte("root-only-secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				return os.Lchown(path, owner, owner)
			}); err != nil {
				t.Fatal(err)
			}
			script := `
echo "uid $(id -u)"
echo made > made-here
cp /usr/bin/id ./x
chmod 4755 ./x && echo PLANTED-SETUID
chmod u+s ./x && echo PLANTED-SETUID-SYMBOLIC
chmod 2755 ./x && echo PLANTED-SETGID
mkdir -m 2755 d && echo PLANTED-SETGID-DIR
python3 -c 'import os; os.open("y", os.O_CREAT|os.O_WRONLY, 0o4755)' 2>/dev/null && echo PLANTED-OPEN-SETUID
python3 -c 'import os; os.setxattr("x", "security.capability", bytes.fromhex("0100000200200000000000000000000000000000"))' 2>/dev/null && echo PLANTED-FILECAP
cat ` + rootOnly + `/key && echo READ-ROOT-ONLY
true`
			r := e.runPolicy(fmt.Sprintf("[filesystem]\nallow_read = [%q]\n", rootOnly), p, script)
			if r.code != 0 {
				t.Fatalf("run: %s", r)
			}
			if !strings.Contains(r.stdout, "uid 0\n") {
				t.Errorf("the sandbox's own uid: %q, want 0 (root of its namespace)", r.stdout)
			}
			for _, bad := range []string{"PLANTED-", "READ-ROOT-ONLY", "root-only-secret"} {
				if strings.Contains(r.stdout, bad) {
					t.Errorf("the sandbox did %s:\n%s", bad, r.stdout)
				}
			}
			fi, err := os.Stat(filepath.Join(p, "made-here"))
			if err != nil {
				t.Fatal(err)
			}
			if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != owner || int(st.Gid) != owner {
				t.Errorf("made-here is owned by %d:%d on the host, want the project's owner %d", st.Uid, st.Gid, owner)
			}
			// Nothing in the project gives a host user privilege.
			_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if fi, err := os.Lstat(path); err == nil && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 && !fi.IsDir() {
					t.Errorf("%s is set-id on the host: %v", path, fi.Mode())
				}
				if n, _ := syscall.Getxattr(path, "security.capability", nil); n > 0 {
					t.Errorf("%s carries file capabilities on the host", path)
				}
				return nil
			})
			// And a host user who runs what it left gets nothing more.
			if _, err := os.Stat(filepath.Join(p, "x")); err == nil {
				out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", filepath.Join(p, "x")).CombinedOutput()
				if err != nil || strings.Contains(string(out), "euid=0") || !strings.HasPrefix(string(out), "uid=65534") {
					t.Errorf("nobody running the sandbox's ./x: %v %q", err, out)
				}
			}
		})
	}
}

// 12.3: repository metadata and tool configuration that run code on the
// host are read-only inside, and the git directory cannot be renamed away
// and replaced; git commit, branch, tag, stash and gc still work.
func TestPolicyRepositoryMetadataReadOnly(t *testing.T) {
	e := newEnv(t)
	p := gitProject(e)
	for _, d := range []string{".vscode", ".idea", ".devcontainer", ".claude", ".zed"} {
		if err := os.MkdirAll(filepath.Join(p, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, d, "settings.json"), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".gitmodules", ".mcp.json", ".devcontainer.json"} {
		if err := os.WriteFile(filepath.Join(p, f), []byte(""), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hook, _ := os.ReadFile(filepath.Join(p, ".git", "hooks", "pre-commit"))
	config, _ := os.ReadFile(filepath.Join(p, ".git", "config"))
	marker := filepath.Join(e.tmp, "pwned")
	script := `
git config core.fsmonitor 'touch ` + marker + `' 2>/dev/null && echo WROTE-CONFIG
git config core.hooksPath /tmp 2>/dev/null && echo WROTE-HOOKSPATH
echo 'touch /tmp/pwned' > .git/hooks/pre-commit 2>/dev/null && echo WROTE-HOOK
echo x > .git/hooks/post-checkout 2>/dev/null && echo NEW-HOOK
echo '[submodule "x"]' > .gitmodules 2>/dev/null && echo WROTE-GITMODULES
echo '{"tasks":[]}' > .vscode/tasks.json 2>/dev/null && echo WROTE-VSCODE
echo x > .idea/workspace.xml 2>/dev/null && echo WROTE-IDEA
echo x > .devcontainer/devcontainer.json 2>/dev/null && echo WROTE-DEVCONTAINER
echo '{"initializeCommand":"touch /tmp/pwned"}' > .devcontainer.json 2>/dev/null && echo WROTE-DEVCONTAINER-FILE
echo '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}' > .claude/settings.json 2>/dev/null && echo WROTE-CLAUDE
echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json 2>/dev/null && echo WROTE-MCP
echo '[]' > .zed/tasks.json 2>/dev/null && echo WROTE-ZED
mv .git .git-old 2>/dev/null && echo MOVED-GIT
set -e
echo change > README
git -c user.email=a@b.c -c user.name=a commit -qam second && echo COMMIT-OK
git branch topic && echo BRANCH-OK
git tag v1 && echo TAG-OK
echo more >> README
git -c user.email=a@b.c -c user.name=a stash -q && echo STASH-OK
git gc -q && echo GC-OK
`
	r := e.runPolicy("extends = \"default\"\n", p, script)
	for _, bad := range []string{"WROTE-", "NEW-HOOK", "MOVED-GIT"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("the sandbox could %s:\n%s", bad, r.stdout)
		}
	}
	for _, ok := range []string{"COMMIT-OK", "BRANCH-OK", "TAG-OK", "STASH-OK", "GC-OK"} {
		if !strings.Contains(r.stdout, ok) {
			t.Errorf("git no longer works in the sandbox (%s missing): %s", ok, r)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(p, ".git", "hooks", "pre-commit")); string(now) != string(hook) {
		t.Error("the hook changed on the host")
	}
	if now, _ := os.ReadFile(filepath.Join(p, ".git", "config")); string(now) != string(config) {
		t.Errorf("the repository config changed on the host:\n%s", now)
	}
	gitIn(t, p, "status")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("%s exists: the sandbox's git config ran on the host", marker)
	}
	if log := gitIn(t, p, "log", "--oneline"); !strings.Contains(log, "second") {
		t.Errorf("the commit made inside is not in the host's repository: %s", log)
	}
	// A policy opts a path back in by name.
	r = e.runPolicy("[filesystem]\nallow_write = [\"$PROJECT/.vscode\"]\n", p, "echo '{}' > .vscode/tasks.json && echo VSCODE-WRITABLE")
	if !strings.Contains(r.stdout, "VSCODE-WRITABLE") {
		t.Errorf("allow_write of $PROJECT/.vscode did not make it writable: %s", r)
	}
}

// 12.3, the part no bind can stop: a sandbox that makes a new repository
// in the project (a shell prompt runs git status there on cd) or a
// commondir in the repository's git directory (which sends git to
// another config) has it moved aside at teardown, and said so.
func TestPolicyPlantedRepositoryQuarantined(t *testing.T) {
	e := newEnv(t)
	p := gitProject(e)
	if err := os.MkdirAll(filepath.Join(p, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The commands would run on the host: markers under this test's own
	// directory say whether they did.
	marker := filepath.Join(e.tmp, "pwned")
	script := fmt.Sprintf(`git init -q src && git -C src config core.fsmonitor 'touch %[1]s-planted' && echo PLANTED-REPO
mkdir -p evil && printf '[core]\n\tfsmonitor = touch %[1]s-common\n' > evil/config && echo ../evil > .git/commondir && echo PLANTED-COMMONDIR`, marker)
	r := e.runPolicy("extends = \"default\"\n", p, script)
	if r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	for _, planted := range []string{filepath.Join(p, "src", ".git"), filepath.Join(p, ".git", "commondir")} {
		if _, err := os.Lstat(planted); err == nil {
			t.Errorf("%s is still there after teardown", planted)
		}
		if _, err := os.Lstat(planted + ".vetto-quarantined"); err != nil {
			t.Errorf("%s was not moved aside: %v", planted, err)
		}
		if !strings.Contains(r.stderr, planted+" -> ") {
			t.Errorf("the user was not told about %s: %q", planted, r.stderr)
		}
	}
	gitIn(t, filepath.Join(p, "src"), "status")
	gitIn(t, p, "status")
	for _, m := range []string{marker + "-planted", marker + "-common"} {
		if _, err := os.Stat(m); err == nil {
			t.Errorf("%s exists: the planted git config ran on the host", m)
		}
	}
}

// gitMayRun runs git args in dir on the host, as a shell prompt does on
// cd, whatever it exits with: the caller looks for what it ran.
func gitMayRun(dir string, args ...string) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
	_ = cmd.Run()
}

// runPolicyAttack runs the script's lines in a default-profile sandbox on
// project p; a line that gets through echoes WROTE-…, and none may.
func (e *env) runPolicyAttack(p string, lines []string, what string) result {
	e.t.Helper()
	r := e.runPolicy("extends = \"default\"\n", p, strings.Join(lines, "\n"))
	if r.code != 0 {
		e.t.Fatalf("run: %s", r)
	}
	if strings.Contains(r.stdout, "WROTE-") {
		e.t.Errorf("the sandbox wrote %s:\n%s", what, r.stdout)
	}
	return r
}

// noMarkers fails the test for each marker-NAME file that exists: a
// command the sandbox left ran on the host.
func noMarkers(t *testing.T, marker string, names ...string) {
	t.Helper()
	for _, m := range names {
		if _, err := os.Stat(marker + "-" + m); err == nil {
			t.Errorf("%s-%s exists: what the sandbox left ran on the host", marker, m)
		}
	}
}

// A git directory git runs code from, whatever shape it has: one without
// a hooks directory (go-git, JGit and `git init --template=` make none),
// without a config, or not named .git at all (a bare repository, which git
// finds by what it holds: a prompt's git status in it reads its config).
// The sandbox must not be able to give any of them code the host's git
// runs, and what it planted must not run when the user enters it.
func TestPolicyEveryGitDirectoryProtected(t *testing.T) {
	e := newEnv(t)
	p := gitProject(e)
	marker := filepath.Join(e.tmp, "pwned")
	for _, d := range []string{"hooks", "info"} {
		if err := os.RemoveAll(filepath.Join(p, ".git", d)); err != nil {
			t.Fatal(err)
		}
	}
	lib := filepath.Join(p, "vendor", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, lib, "init", "-q")
	if err := os.Remove(filepath.Join(lib, ".git", "config")); err != nil {
		t.Fatal(err)
	}
	fixture := filepath.Join(p, "testdata", "remote.git")
	if err := os.MkdirAll(filepath.Dir(fixture), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, filepath.Dir(fixture), "init", "-q", "--bare", "remote.git")
	// A planted git directory: core.worktree makes git status in it run
	// core.fsmonitor, which is what a prompt does on cd.
	plant := func(dir, name string) string {
		return fmt.Sprintf("git -C %[1]s config core.bare false && git -C %[1]s config core.worktree .. && git -C %[1]s config core.fsmonitor 'touch %[2]s-%[3]s' && echo PLANTED-%[3]s", dir, marker, name)
	}
	r := e.runPolicyAttack(p, []string{
		`mkdir -p .git/hooks && printf '#!/bin/sh\ntouch ` + marker + `-hook\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo WROTE-HOOK`,
		`mkdir -p .git/info && echo '* diff=x' > .git/info/attributes && echo WROTE-INFO`,
		`printf '[core]\n\tfsmonitor = touch ` + marker + `-config\n' > vendor/lib/.git/config && echo WROTE-CONFIG`,
		`printf '[core]\n\tfsmonitor = touch ` + marker + `-fixture\n\tbare = false\n\tworktree = ..\n' >> testdata/remote.git/config && echo WROTE-FIXTURE`,
		`git init -q --bare tools.git && ` + plant("tools.git", "bare"),
		`git init -q src && ` + plant("src/.git", "repo"),
		`echo change > README && git -c user.email=a@b.c -c user.name=a commit -qam second && echo COMMIT-OK`,
	}, "git metadata the host runs")
	for _, want := range []string{"COMMIT-OK", "PLANTED-bare", "PLANTED-repo"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("%s missing: git no longer works in the sandbox: %s", want, r)
		}
	}
	// Everything the user would do next on the host.
	if err := os.WriteFile(filepath.Join(p, "README"), []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, p, "commit", "-qam", "on the host")
	gitMayRun(lib, "status")
	gitMayRun(fixture, "status")
	gitMayRun(filepath.Join(p, "tools.git"), "status")
	quarantined, _ := filepath.Glob(filepath.Join(p, "src", ".git.vetto-quarantined*"))
	if len(quarantined) == 0 {
		t.Errorf("src/.git was not moved aside: %s", r.stderr)
	}
	for _, q := range quarantined {
		gitMayRun(q, "status")
	}
	noMarkers(t, marker, "hook", "config", "fixture", "bare", "repo")
	// What spec made for the repository is empty and the repository
	// owner's, as git init would have made it.
	fi, err := os.Stat(filepath.Join(p, ".git", "hooks"))
	if err != nil {
		t.Fatalf("the hooks directory was not made: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(p, ".git", "hooks")); len(entries) != 0 {
		t.Errorf(".git/hooks holds %v", entries)
	}
	if !fi.IsDir() {
		t.Errorf(".git/hooks is %v", fi.Mode())
	}
}

// Hooks git runs from outside its git directory: core.hooksPath names a
// directory in the work tree (`.githooks`; husky's `.husky/_`, whose stubs
// run the scripts in `.husky/`), and hook managers read what to run from a
// file in the project (pre-commit, lefthook). What the sandbox writes
// there must not run at the user's next git commit on the host, and a
// hooksPath that names a directory that does not exist must not be the
// sandbox's to make.
func TestPolicyHooksOutsideGitDirReadOnly(t *testing.T) {
	e := newEnv(t)
	p := gitProject(e)
	marker := filepath.Join(e.tmp, "pwned")
	repo := func(dir, hooksPath string, files map[string]string) {
		writeTree(t, dir, files, 0o755)
		for f := range files {
			if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
			gitIn(t, dir, "init", "-q")
		}
		gitIn(t, dir, "config", "core.hooksPath", hooksPath)
	}
	repo(p, ".githooks", map[string]string{".githooks/pre-commit": "#!/bin/sh\nexit 0\n"})
	repo(filepath.Join(p, "web"), ".husky/_", map[string]string{
		".husky/_/pre-commit": "#!/bin/sh\nexec sh .husky/pre-commit\n",
		".husky/pre-commit":   "exit 0\n",
	})
	repo(filepath.Join(p, "gone"), "hooks-not-made", map[string]string{"README": "x\n"})
	writeTree(t, filepath.Join(p, "py"), map[string]string{".pre-commit-config.yaml": "repos: []\n", "lefthook.yml": "pre-commit:\n"}, 0o755)
	hook := func(name string) string {
		return `#!/bin/sh\ntouch ` + marker + `-` + name + `\n`
	}
	r := e.runPolicyAttack(p, []string{
		`printf '` + hook("githooks") + `' > .githooks/pre-commit && echo WROTE-GITHOOKS`,
		`printf 'touch ` + marker + `-husky\n' > web/.husky/pre-commit && echo WROTE-HUSKY`,
		`mkdir -p gone/hooks-not-made && printf '` + hook("made") + `' > gone/hooks-not-made/pre-commit && chmod +x gone/hooks-not-made/pre-commit && echo WROTE-MADE`,
		`echo '- repo: local' >> py/.pre-commit-config.yaml && echo WROTE-PRECOMMIT`,
		`echo '  commands: {}' >> py/lefthook.yml && echo WROTE-LEFTHOOK`,
		`echo change > README && git -c user.email=a@b.c -c user.name=a commit -qam second --no-verify && echo COMMIT-OK`,
	}, "hooks the host's git runs")
	if !strings.Contains(r.stdout, "COMMIT-OK") {
		t.Errorf("git no longer works in the sandbox: %s", r)
	}
	for _, dir := range []string{p, filepath.Join(p, "web"), filepath.Join(p, "gone")} {
		if err := os.WriteFile(filepath.Join(dir, "README"), []byte("host\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitIn(t, dir, "add", "README")
		gitIn(t, dir, "commit", "-qm", "on the host")
	}
	noMarkers(t, marker, "githooks", "husky", "made")
}

// A symlink a sandbox leaves where vetto makes a path read-only — a .git
// file, tool configuration, a repository's config — would have the next
// sandbox's read-only bind show what it points to (the user's ~/.ssh,
// anything on the host) inside. spec refuses such a link; create refuses
// a bundle whose bind source became one since it was compiled.
func TestPolicyPlantedSymlinkShowsNothing(t *testing.T) {
	e := newEnv(t)
	p := gitProject(e)
	secret := filepath.Join(e.tmp, "outside")
	writeTree(t, secret, map[string]string{"id_rsa": "HOST-PRIVATE-KEY\n"}, 0o755)
	if err := os.Chmod(filepath.Join(secret, "id_rsa"), 0o644); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(e.tmp, "policy.toml")
	if err := os.WriteFile(policy, []byte("extends = \"default\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := "cat .vscode/id_rsa sub/.git/id_rsa .git/config/id_rsa 2>/dev/null; true"
	for _, link := range []string{".vscode", "sub/.git", ".git/config"} {
		t.Run(strings.ReplaceAll(link, "/", "-"), func(t *testing.T) {
			at := filepath.Join(p, link)
			saved := at + ".saved"
			if _, err := os.Lstat(at); err == nil {
				if err := os.Rename(at, saved); err != nil {
					t.Fatal(err)
				}
				defer func() { os.Remove(at); os.Rename(saved, at) }()
			} else {
				defer os.Remove(at)
			}
			if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(secret, at); err != nil {
				t.Fatal(err)
			}
			bundle, err := os.MkdirTemp(e.tmp, "bundle-")
			if err != nil {
				t.Fatal(err)
			}
			// Refused, naming the link; or compiled without binding it
			// (a .vscode link is no tool configuration directory), and
			// then it shows nothing.
			r := e.vetto("spec", "--policy", policy, "--bundle", bundle, "--project", p, "--", "sh", "-c", read)
			switch {
			case r.code == 125 && strings.Contains(r.stderr, at+" is a symlink"):
			case r.code == 0:
				if run := e.vetto("run", "--bundle", bundle, e.id()); strings.Contains(run.stdout, "HOST-PRIVATE-KEY") || run.code != 0 {
					t.Errorf("the sandbox read the host's file through %s: %s", link, run)
				}
			default:
				t.Errorf("spec with %s a symlink out of the project: %s; want 125 naming it, or a bundle", link, r)
			}
		})
	}
	// Compiled while .vscode was a directory, run after it became a link.
	if err := os.MkdirAll(filepath.Join(p, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	bundle, _ := e.compilePolicy("extends = \"default\"\n", p, read)
	if err := os.Remove(filepath.Join(p, ".vscode")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(p, ".vscode")); err != nil {
		t.Fatal(err)
	}
	r := e.vetto("run", "--bundle", bundle, e.id())
	if r.code != 125 || !strings.Contains(r.stderr, "is now a symlink") || strings.Contains(r.stdout, "HOST-PRIVATE-KEY") {
		t.Errorf("run after .vscode became a symlink: %s; want 125, drift", r)
	}
}

// The policy annotations are a bundle's word, and a bundle may come from
// anyone: dev.vetto.scan naming a directory the bundle does not bind had
// create walk it and teardown move every repository in it aside — as
// root, anywhere on the host (67fa8d4 renamed the victim's .git). Scan
// roots must be shown by a bind of the bundle, and teardown moves only
// what the sandbox could have written.
func TestPolicyAnnotationsCannotReachTheHost(t *testing.T) {
	e := newEnv(t)
	repo := func(name string) string {
		dir := filepath.Join(e.tmp, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		gitIn(t, dir, "init", "-q")
		return dir
	}
	intact := func(victim, when string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(victim, ".git", "HEAD")); err != nil {
			t.Errorf("%s: the victim's repository is gone: %v", when, err)
		}
		if _, err := os.Lstat(filepath.Join(victim, ".git.vetto-quarantined")); err == nil {
			t.Errorf("%s: the victim's repository was moved aside", when)
		}
	}
	annotate := func(victim string) func(*specs.Spec) {
		return func(s *specs.Spec) {
			s.Annotations = map[string]string{"dev.vetto.scan": `["` + victim + `"]`, "dev.vetto.repos": "[]"}
		}
	}

	victim := repo("victim")
	id := e.id()
	r := e.vetto("run", "-b", e.bundle([]string{"true"}, annotate(victim)), id)
	if r.code == 0 || !strings.Contains(r.stderr, "no bind of the bundle shows") {
		t.Errorf("run with dev.vetto.scan naming an unbound directory: %s; want it refused", r)
	}
	intact(victim, "scan root not bound")
	e.assertNothingLeft(id)

	// Bound read-only: the sandbox cannot have made the repository.
	victim = repo("victim-ro")
	id = e.id()
	r = e.vetto("run", "-b", e.bundle([]string{"true"}, edits(annotate(victim), func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/victim", Type: "bind", Source: victim, Options: []string{"rbind", "ro"}})
	})), id)
	if r.code != 0 {
		t.Errorf("run with the scan root bound read-only: %s", r)
	}
	intact(victim, "scan root bound read-only")
	e.assertNothingLeft(id)
}

// 12.4: masks hold at run time, not only at compile time. A secret moved
// by one run (its parent directory renamed, or into .git) is masked or
// refused on the next, even from a fresh compile.
func TestPolicyMasksHoldAtRunTime(t *testing.T) {
	e := newEnv(t)
	p := gitProject(e)
	if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "sub", ".env"), []byte("NESTED=planted-nested-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	policy := "[filesystem]\ndeny = [\"$PROJECT/secrets/key.pem\"]\n"
	// Run 1: try to carry the secrets out from under their masks.
	bundle, _ := e.compilePolicy(policy, p, `mv sub .git/sub 2>/dev/null && echo MOVED-SUB
mv secrets public 2>/dev/null && echo MOVED-SECRETS
true`)
	r := e.vetto("run", "--bundle", bundle, e.id())
	if strings.Contains(r.stdout, "MOVED-") {
		t.Fatalf("run 1 moved a masked secret's directory: %s", r)
	}
	// (mv falls back to a copy, which cannot read the masked file.)
	if data, err := os.ReadFile(filepath.Join(p, ".git", "sub", ".env")); err == nil && strings.Contains(string(data), "planted") {
		t.Fatal("run 1 copied the masked secret into .git")
	}
	// The host moves one itself, as a user might: the same bundle is now
	// refused (drift), a fresh compile masks it where it is.
	if err := os.Rename(filepath.Join(p, "sub"), filepath.Join(p, ".git", "moved")); err != nil {
		t.Fatal(err)
	}
	id := e.id()
	if r := e.vetto("run", "--bundle", bundle, id); r.code != 125 || !strings.Contains(r.stderr, ".git/moved/.env (secret) shows unmasked") {
		t.Fatalf("run of the old bundle after the secret moved into .git: %s; want 125 naming it", r)
	}
	e.assertNothingLeft(id)
	r = e.runPolicy(policy, p, "cat .git/moved/.env; cat public/key.pem secrets/key.pem; true")
	if strings.Contains(r.stdout, "planted-") {
		t.Fatalf("a fresh compile leaks a moved secret: %s", r)
	}
}

// 12.5: a mask covered by a later mount is refused at create, and is not
// taken for a mask by verification.
func TestPolicyMaskCoveredByLaterMount(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	bundle, _ := e.compilePolicy("extends = \"default\"\n", p, "cat .env")
	s := readBundleSpec(t, bundle)
	// A later bind of the project over its own mask.
	s.Mounts = append(s.Mounts, specs.Mount{Destination: p, Type: "bind", Source: p, Options: []string{"bind", "rw"}})
	writeSpec(t, bundle, s)
	id := e.id()
	r := e.vetto("run", "--bundle", bundle, id)
	if r.code != 125 || !strings.Contains(r.stderr, "[masks.covered]") || strings.Contains(r.stdout, "planted-dotenv-secret") {
		t.Fatalf("run of a bundle whose masks a later bind covers: %s; want 125 naming masks.covered", r)
	}
	e.assertNothingLeft(id)
}

// 12.6: no host unix socket is reachable with the network off: sockets
// under the readable roots are masked (an ssh-agent in the project, one
// under $HOME with the permissive profile), and one planted after the
// bundle was compiled makes create refuse.
func TestPolicyHostSocketsUnreachable(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	home := filepath.Join(e.tmp, "home")
	if err := os.MkdirAll(filepath.Join(home, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	accepted := make(chan string, 4)
	serve := func(path string) {
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		_ = os.Chmod(path, 0o777)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted <- path
				c.Close()
			}
		}()
	}
	serve(filepath.Join(p, "agent.sock"))
	serve(filepath.Join(home, "run", "docker.sock"))
	script := fmt.Sprintf(`for s in %s/agent.sock %s/run/docker.sock; do python3 -c 'import socket,sys; c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); print("CONNECTED", sys.argv[1])' $s 2>&1 | tail -1; done`, p, home)
	bundle, _ := e.compilePermissive(p, home, script)
	r := e.vetto("run", "--bundle", bundle, e.id())
	if strings.Contains(r.stdout, "CONNECTED") {
		t.Fatalf("the sandbox reached a host socket: %s", r)
	}
	select {
	case s := <-accepted:
		t.Fatalf("the host socket %s accepted a connection from the sandbox", s)
	case <-time.After(200 * time.Millisecond):
	}
	// A socket planted after the compile: create refuses the bundle.
	serve(filepath.Join(p, "late.sock"))
	id := e.id()
	if r := e.vetto("run", "--bundle", bundle, id); r.code != 125 || !strings.Contains(r.stderr, "late.sock (socket) shows unmasked") {
		t.Fatalf("run after a socket was planted in the project: %s; want 125 naming it", r)
	}
	e.assertNothingLeft(id)
}

// 12.7: the credentials users have are masked by every profile, permissive
// included; a token in the project's git config never reaches the sandbox
// (git still works with the stripped copy); the project's own rc files
// holding tokens are masked.
func TestPolicyCredentialCoverage(t *testing.T) {
	e := newEnv(t)
	p := gitProject(e)
	gitIn(t, p, "remote", "add", "origin", "https://x-access-token:ghs_plantedGitToken0123456789abcdef@example.com/o/r.git")
	home := filepath.Join(e.tmp, "home")
	creds := []string{
		".claude/.credentials.json", ".codex/auth.json", ".config/git/credentials", ".config/containers/auth.json",
		".local/share/fish/fish_history", ".psql_history", ".mysql_history", ".git-credentials", ".config/gh/hosts.yml",
		".pypirc", ".cargo/credentials.toml", ".terraform.d/credentials.tfrc.json", ".local/share/keyrings/login.keyring",
		".password-store/x.gpg", ".config/op/config", ".vault-token", ".aws/credentials", ".ssh/id_ed25519",
	}
	for _, c := range creds {
		path := filepath.Join(home, c)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("planted-credential "+c+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{".npmrc": "//registry/:_authToken=planted-npm\n", ".envrc": "export T=planted-envrc\n"} {
		if err := os.WriteFile(filepath.Join(p, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var reads []string
	for _, c := range creds {
		reads = append(reads, "cat "+filepath.Join(home, c)+" 2>/dev/null")
	}
	script := strings.Join(reads, "; ") + "; cat .npmrc .envrc 2>/dev/null; cat .git/config; git remote -v; git log --oneline | head -1; true"
	bundle, file := e.compilePermissive(p, home, script)
	r := e.vetto("run", "--bundle", bundle, e.id())
	if r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	for _, bad := range []string{"planted-", "ghs_planted"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("the sandbox read a credential (%s):\n%s", bad, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "https://example.com/o/r.git") || !strings.Contains(r.stdout, "first") {
		t.Errorf("git does not work with the stripped config:\n%s", r.stdout)
	}
	// The explanation names them.
	cmd := exec.Command(binary, "policy", "explain", "--project", p, file)
	cmd.Env = append(os.Environ(), "HOME="+home)
	if ex := e.runCmd(cmd); !strings.Contains(ex.stdout, ".claude/.credentials.json") || !strings.Contains(ex.stdout, "/etc/docker/key.json") {
		t.Errorf("policy explain does not list the agent credentials and /etc/docker/key.json: %s", ex.stdout)
	}
}

// The permissive profile run by root whose $HOME is root's own, 0700 (as
// /root is): it launches, the sandbox reads $HOME as a caller who is not
// root reads theirs (a 0600 file included), the credentials below it stay
// masked, and it writes nothing there. Without the id-mapped $HOME, runc
// cannot reach a mask's mount point under the 0700 directory and the
// profile never launches for root.
func TestPolicyPermissiveRootHome(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	home := filepath.Join(e.tmp, "roothome")
	writeTree(t, home, map[string]string{
		"notes.txt":       "root-home-notes\n",
		".npmrc":          "//registry/:_authToken=planted-npm-token\n",
		".ssh/id_ed25519": "planted-ssh-key\n",
	}, 0o700)
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`cd %[1]s && cat notes.txt; cat .npmrc .ssh/id_ed25519 2>/dev/null; echo x > %[1]s/planted 2>/dev/null && echo WROTE-HOME; chmod 0777 %[1]s 2>/dev/null && echo CHMOD-HOME; true`, home)
	bundle, _ := e.compilePermissive(p, home, script)
	id := e.id()
	r := e.vetto("run", "--bundle", bundle, id)
	if r.code != 0 {
		t.Fatalf("permissive run as root with a 0700 $HOME: %s", r)
	}
	if !strings.Contains(r.stdout, "root-home-notes") {
		t.Errorf("the sandbox cannot read its $HOME:\n%s", r.stdout)
	}
	for _, bad := range []string{"planted-", "WROTE-HOME", "CHMOD-HOME"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("the sandbox did %s:\n%s", bad, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "planted")); err == nil {
		t.Errorf("the sandbox wrote into the host's $HOME")
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("$HOME on the host: %v %v, want 0700", fi.Mode(), err)
	}
	e.assertNothingLeft(id)
}

// 12.8: variables whose values look like secrets are dropped even when
// their names pass, each said once with its name and never its value.
func TestPolicySecretValuesDropped(t *testing.T) {
	e := newEnv(t)
	p := policyProject(e)
	values := map[string]string{
		"CI_REPOSITORY_URL": "https://gitlab-ci-token:planted-job-token@gitlab.example.com/g/p.git",
		"GITHUB_PAT":        "ghp_plantedPersonalAccessToken0123456789",
		"KUBE_CONFIG_DATA":  "planted-kube-config-data",
		"https_proxy":       "http://user:planted-proxy-pass@proxy.example.com:3128",
		"REDIS_URL":         "redis://:planted-redis-pw@redis.example.com:6379",
		"OPENAI_BASE":       "sk-plantedOpenAIKey0123456789abcdef",
		"SESSION":           "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlLXBsYW50ZWQ",
		"CI_PROJECT_NAME":   "kept-ordinary-value",
	}
	var names []string
	for k, v := range values {
		t.Setenv(k, v)
		names = append(names, fmt.Sprintf("%q", k))
	}
	bundle, compiled := e.compilePolicy(fmt.Sprintf("[environment]\npass_through = [%s]\n", strings.Join(names, ", ")), p, "env")
	r := e.vetto("run", "--bundle", bundle, e.id())
	if strings.Contains(r.stdout, "planted") || strings.Contains(compiled.stderr, "planted") {
		t.Errorf("a secret value reached the sandbox or the terminal:\nstdout %s\nspec stderr %s", r.stdout, compiled.stderr)
	}
	if !strings.Contains(r.stdout, "CI_PROJECT_NAME=kept-ordinary-value") {
		t.Errorf("an ordinary value was dropped: %s", r.stdout)
	}
	for k := range values {
		if k == "CI_PROJECT_NAME" {
			continue
		}
		if n := strings.Count(compiled.stderr, k+" is not passed"); n != 1 {
			t.Errorf("%s: said %d times, want once: %q", k, n, compiled.stderr)
		}
	}
}

func readBundleSpec(t *testing.T, bundle string) *specs.Spec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// compilePermissive compiles the permissive profile for project with
// $HOME at home, running `sh -c script`; it returns the bundle and the
// policy file.
func (e *env) compilePermissive(project, home, script string) (bundle, file string) {
	e.t.Helper()
	file = filepath.Join(e.tmp, "permissive.toml")
	if err := os.WriteFile(file, []byte("extends = \"permissive\"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	bundle = e.tmpBundle()
	cmd := exec.Command(binary, "spec", "--policy", file, "--project", project, "--bundle", bundle, "--", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "HOME="+home)
	if r := e.runCmd(cmd); r.code != 0 {
		e.t.Fatalf("spec: %s", r)
	}
	return bundle, file
}
