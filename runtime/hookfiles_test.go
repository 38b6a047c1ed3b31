//go:build unix

package runtime

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

func TestHookFiles(t *testing.T) {
	// Resolved: only the symlinks made here are on these paths.
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exe := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script := exe("notify.sh", "#!/srv/data/interp -x\necho\n")
	sh, py, bash := exe("sh", ""), exe("python3.11", ""), exe("bash", "")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(script, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	dataLink := filepath.Join(dir, "data-link")
	if err := os.Symlink(data, dataLink); err != nil {
		t.Fatal(err)
	}
	s := &specs.Spec{Hooks: spec.WithRuntimeHooks(&specs.Hooks{
		Prestart:  []specs.Hook{{Path: "relative-name"}, {Path: fifo}},
		Poststart: []specs.Hook{{Path: link}},
		Poststop: []specs.Hook{
			{Path: sh, Args: []string{"sh", "-e", "/srv/data/cleanup.sh", "arg"}},
			{Path: sh, Args: []string{"sh", "-c", "/srv/data/inline.sh"}},
			{Path: py, Args: []string{"python3", "/srv/data/hook.py"}},
			{Path: bash, Args: []string{"bash", filepath.Join(dataLink, "later", "made.sh")}},
		},
	}, "/usr/local/bin/vetto-runtime")}
	var got []string
	files, err := hookFiles(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got = append(got, f.What+" "+f.Real)
	}
	want := []string{
		// A FIFO is named, not opened for its #! line (that would hang).
		"prestart hook 1's executable " + fifo,
		// A symlink: its target, and the symlink itself, an entry of its
		// directory that whoever writes that directory can repoint.
		"poststart hook 0's executable " + script,
		"poststart hook 0's executable (through the symlink " + link + ") " + link,
		"poststart hook 0's interpreter (#!) /srv/data/interp",
		"poststop hook 0's executable " + sh,
		// sh -e takes the script next: -e is an option there, not a
		// script string.
		"poststop hook 0's script /srv/data/cleanup.sh",
		// sh -c's string is followed: its command is a file too.
		"poststop hook 1's executable " + sh,
		"poststop hook 1's command /srv/data/inline.sh",
		// python3.11 is python.
		"poststop hook 2's executable " + py,
		"poststop hook 2's script /srv/data/hook.py",
		"poststop hook 3's executable " + bash,
		// Not there yet, behind a symlink: named where it will be, and
		// through the symlink.
		"poststop hook 3's script " + filepath.Join(data, "later", "made.sh"),
		"poststop hook 3's script (through the symlink " + dataLink + ") " + dataLink,
	}
	if !slices.Equal(got, want) {
		t.Errorf("hookFiles:\n got %q\nwant %q", got, want)
	}
}

// What a hook's command line runs besides its executable: through
// wrappers, shell strings, interpreters' options and PATH.
func TestHookCommandFiles(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "cleanup"), []byte("#!/srv/data/interp\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=/srv/data/bin:" + bin + ":/srv/data/later"
	envScript := filepath.Join(dir, "env-hook.sh")
	if err := os.WriteFile(envScript, []byte("#!/usr/bin/env hookshell\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	splitScript := filepath.Join(dir, "split-hook.sh")
	if err := os.WriteFile(splitScript, []byte("#!/usr/bin/env -S hookshell -e\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		env     []string
		want    []string // named, among others
		notWant []string // never named
	}{
		{"sh -c runs its command", []string{"/bin/sh", "-c", "/srv/data/x.sh"}, nil, []string{"/srv/data/x.sh"}, nil},
		{"sh -ec is -c", []string{"/bin/sh", "-ec", "/srv/data/x.sh arg; echo done > /srv/data/log"}, nil,
			[]string{"/srv/data/x.sh"}, []string{"/srv/data/log"}},
		{"an option's argument is not the script", []string{"/bin/bash", "-o", "pipefail", "/srv/data/x.sh"}, nil, []string{"/srv/data/x.sh"}, nil},
		{"env runs its command", []string{"/usr/bin/env", "FOO=1", "-u", "BAR", "sh", "/srv/data/x.sh"}, nil, []string{"/srv/data/x.sh"}, nil},
		{"env -S splits its string", []string{"/usr/bin/env", "-S", "sh /srv/data/x.sh"}, nil, []string{"/srv/data/x.sh"}, nil},
		{"busybox runs its applet", []string{"/bin/busybox", "sh", "/srv/data/x.sh"}, nil, []string{"/srv/data/x.sh"}, nil},
		{"timeout's duration is no command", []string{"/usr/bin/timeout", "-s", "KILL", "5", "/srv/data/x"}, nil, []string{"/srv/data/x"}, nil},
		{"wrappers and options in a row", []string{"/usr/bin/nice", "-n", "5", "python3", "-W", "ignore", "/srv/data/x.py"}, nil, []string{"/srv/data/x.py"}, nil},
		{". in a string", []string{"/bin/sh", "-c", "cd /tmp && . /srv/data/env.sh"}, nil, []string{"/srv/data/env.sh"}, nil},
		{"a name looked up in PATH: every place up to where it is", []string{"/bin/sh", "-c", "cleanup"}, []string{path},
			[]string{"/srv/data/bin/cleanup", filepath.Join(bin, "cleanup"), "/srv/data/interp"}, []string{"/srv/data/later/cleanup"}},
		{"a name in no PATH directory: every place", []string{"/bin/sh", "-c", "nosuch-tool"}, []string{path},
			[]string{"/srv/data/bin/nosuch-tool", "/srv/data/later/nosuch-tool"}, nil},
		{"env's PATH= is the command's", []string{"/usr/bin/env", "PATH=/srv/data/p", "tool"}, nil, []string{"/srv/data/p/tool"}, nil},
		{"redirections and arguments are data", []string{"/bin/sh", "-c", "FOO=1 /srv/data/x 2>/srv/data/err | tee /srv/data/out"}, nil,
			[]string{"/srv/data/x"}, []string{"/srv/data/err", "/srv/data/out"}},
		{"awk -f is a script, its first operand code", []string{"/usr/bin/awk", "-F", ":", "-f", "/srv/data/x.awk", "/srv/data/in"}, nil,
			[]string{"/srv/data/x.awk"}, []string{"/srv/data/in"}},
		{"awk's program text is no file", []string{"/usr/bin/awk", "{print}", "/srv/data/in"}, nil, nil, []string{"/srv/data/in"}},
		{"flock -c", []string{"/usr/bin/flock", "/tmp/lock", "-c", "/srv/data/x"}, nil, []string{"/srv/data/x"}, []string{"/tmp/lock"}},
		{"an echoed path is data", []string{"/bin/sh", "-c", `echo "/srv/data/x"`}, nil, nil, []string{"/srv/data/x"}},
		{"command substitution runs", []string{"/bin/sh", "-c", "x=$(/srv/data/gen) && `/srv/data/gen2`"}, nil, []string{"/srv/data/gen", "/srv/data/gen2"}, nil},
		{"if and then run", []string{"/bin/sh", "-c", "if /srv/data/check; then '/srv/data/act'; fi"}, nil, []string{"/srv/data/check", "/srv/data/act"}, nil},
		{"eval runs its string", []string{"/bin/sh", "-c", `eval "/srv/data/x"`}, nil, []string{"/srv/data/x"}, nil},
		{"sh -c with options after it, and --", []string{"/bin/bash", "-c", "-e", "--", "/srv/data/x"}, nil, []string{"/srv/data/x"}, nil},
		{"bash --rcfile runs its file", []string{"/bin/bash", "--rcfile", "/srv/data/rc", "-i"}, nil, []string{"/srv/data/rc"}, nil},
		{"sh -- script", []string{"/bin/sh", "--", "/srv/data/x.sh"}, nil, []string{"/srv/data/x.sh"}, nil},
		{"python -c's code is no file", []string{"/usr/bin/python3", "-c", "/srv/data/x"}, nil, nil, []string{"/srv/data/x"}},
		{"#!/usr/bin/env NAME finds NAME through the hook's PATH", []string{envScript}, []string{path},
			[]string{"/usr/bin/env", "/srv/data/bin/hookshell", filepath.Join(bin, "hookshell"), "/srv/data/later/hookshell"}, nil},
		{"#!/usr/bin/env -S NAME ARG, one argument", []string{splitScript}, []string{path},
			[]string{"/usr/bin/env", "/srv/data/bin/hookshell"}, nil},
		{"LD_PRELOAD in the hook's env", []string{"/bin/true"}, []string{"LD_PRELOAD=/srv/data/x.so /srv/lib/y.so"}, []string{"/srv/data/x.so", "/srv/lib/y.so"}, nil},
		{"BASH_ENV: bash sources it", []string{"/bin/bash", "-c", "true"}, []string{"BASH_ENV=/srv/data/env.sh"}, []string{"/srv/data/env.sh"}, nil},
		{"library and module search paths", []string{"/usr/bin/python3", "-c", "pass"}, []string{"LD_LIBRARY_PATH=/srv/data/lib:/usr/lib", "PYTHONPATH=/srv/data/py", "LUA_PATH=/srv/data/lua/?.lua;;"},
			[]string{"/srv/data/lib", "/srv/data/py", "/srv/data/lua"}, nil},
		{"NODE_OPTIONS --require", []string{"/usr/bin/node", "-e", "1"}, []string{"NODE_OPTIONS=--max-old-space-size=64 --require /srv/data/x.js"}, []string{"/srv/data/x.js"}, []string{"--max-old-space-size=64"}},
		{"assignments before a command in a string", []string{"/bin/sh", "-c", "LD_PRELOAD=/srv/data/x.so tool; export BASH_ENV=/srv/data/e.sh"}, nil,
			[]string{"/srv/data/x.so", "/srv/data/e.sh"}, nil},
		{"env's assignments", []string{"/usr/bin/env", "LD_PRELOAD=/srv/data/x.so", "true"}, nil, []string{"/srv/data/x.so"}, nil},
		{"other variables are data", []string{"/bin/true"}, []string{"OUTPUT=/srv/data/out", "HOME=/srv/data"}, nil, []string{"/srv/data/out", "/srv/data"}},
		{"sh -c inside sh -c", []string{"/bin/sh", "-c", `sh -c '/srv/data/x'`}, nil, []string{"/srv/data/x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &specs.Spec{Hooks: &specs.Hooks{Poststop: []specs.Hook{{Path: tt.args[0], Args: tt.args, Env: tt.env}}}}
			got := map[string]bool{}
			files, err := hookFiles(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				got[f.Real] = true
			}
			for _, w := range tt.want {
				if !got[w] {
					t.Errorf("%s not named; named %v", w, slices.Sorted(maps.Keys(got)))
				}
			}
			for _, w := range tt.notWant {
				if got[w] {
					t.Errorf("%s named, but the hook does not run it", w)
				}
			}
		})
	}
}

func TestShellCommands(t *testing.T) {
	tests := []struct {
		in   string
		want [][]string
	}{
		{"a b; c && d || e | f & g", [][]string{{"a", "b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}}},
		{`a "b c" 'd e' f\ g`, [][]string{{"a", "b c", "d e", "f g"}}},
		{"A=1 B=2 a >out 2> err <in b", [][]string{{"A=1", "B=2", "a", "b"}}},
		{"X=1; a X=2", [][]string{{"X=1"}, {"a", "X=2"}}},
		{"if a; then b; else c; fi", [][]string{{"a"}, {"b"}, {"c"}}},
		{"for x in a b; do c $x; done", [][]string{{"c", "$x"}}},
		{"a # b c\nd", [][]string{{"a"}, {"d"}}},
		{"{ a; } && (b)", [][]string{{"a"}, {"b"}}},
		{"! a", [][]string{{"a"}}},
	}
	for _, tt := range tests {
		if got := shellCommands(tt.in); !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("shellCommands(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The hooks are the bundle's: a bundle that names more than hookFiles
// checks is refused as bad input, quickly, not looked at for seconds.
func TestHookFilesBounded(t *testing.T) {
	var cmds []string
	for i := range 150000 {
		cmds = append(cmds, "cmd"+strconv.Itoa(i))
	}
	deep := "/" + strings.Repeat("a/", 3000) + "hook"
	for _, tt := range []struct {
		name string
		hook specs.Hook
		ok   bool
	}{
		{"a megabyte of commands in sh -c", specs.Hook{Path: "/bin/sh", Args: []string{"sh", "-c", strings.Join(cmds, ";")}}, false},
		{"a path longer than exec takes names nothing", specs.Hook{Path: "/bin/sh", Args: []string{"sh", deep + deep}}, true},
		{"a long PATH", specs.Hook{Path: "/bin/sh", Args: []string{"sh", "-c", "a;b;c;d;e;f;g;h"}, Env: []string{"PATH=" + strings.Repeat("/x/y/z:", 20000)}}, false},
		{"an ordinary hook", specs.Hook{Path: "/bin/sh", Args: []string{"sh", "-ec", "cd /srv && ./build.sh && cleanup --all"}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := hookFiles(&specs.Spec{Hooks: &specs.Hooks{Poststop: []specs.Hook{tt.hook}}})
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("hookFiles took %v", took)
			}
			if tt.ok && err != nil {
				t.Fatalf("hookFiles: %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("hookFiles = %v, want a refusal (ErrInvalidInput)", err)
			}
		})
	}
}
