package runtime

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/runtime/launch"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// A hook's command line can name more code than its executable, and each
// such file the container could write is code of its own run on the host
// as root: hookFiles follows what a command line runs, a few levels deep.
//
//   - An interpreter (sh, python, …) runs the script that is its first
//     operand — "/bin/sh /data/cleanup.sh" runs what /data/cleanup.sh holds
//     when it runs, made yet or not — after its options, some of which
//     take an argument of their own (bash -o pipefail).
//   - A shell given its script as a string (sh -c '…', sh -ec '…', flock
//     -c '…') runs the commands in it: each command word is followed as a
//     command line of its own.
//   - A wrapper (env, nice, timeout, busybox, …) runs the command after
//     its own options and operands.
//   - A command named without a slash is looked up in the hook's PATH
//     (its env's, else the shells' default): each PATH directory up to the
//     one that has it, or all of them, is where a file of that name would
//     run, so each such place is named.
//   - A script's #! line is followed as the kernel runs it: the
//     interpreter, given its one argument and the script (#!/usr/bin/env
//     bash runs bash, found through PATH).
//   - The hook's environment, and the assignments of its strings, can
//     name code it loads: LD_PRELOAD, BASH_ENV, the library and module
//     search paths (codeEnv).
//
// Relative paths with a slash (./x.sh) depend on the directory the hook
// runs in and are named nowhere; nor is what a variable expands to.

// interpreter is how a program that runs a script takes it.
type interpreter struct {
	// inline are the options whose argument is code as a string (python
	// -c, perl -e), or a module to import (python -m): no script file.
	inline []string
	// withArg are the options that take the next argument as theirs.
	withArg []string
	// shell: a shell's -c (alone or in a cluster, -ec) is a flag that
	// makes its first operand a string of shell, whose commands are
	// followed.
	shell bool
	// scriptOpts are the options whose argument is a script file (awk
	// -f); codeOperand: without one, the first operand is code, not a
	// file (awk '{print}').
	scriptOpts  []string
	codeOperand bool
}

var awk = interpreter{scriptOpts: []string{"-f", "--file"}, withArg: []string{"-v", "-F", "--assign", "--field-separator"}, codeOperand: true}

var shell = interpreter{withArg: []string{"-o", "+o", "-O", "+O"}, shell: true}

// interpreters by the name of their executable without its version.
var interpreters = map[string]interpreter{
	"sh": shell, "bash": shell, "dash": shell, "ash": shell, "ksh": shell, "mksh": shell, "zsh": shell, "yash": shell,
	"python": {inline: []string{"-c", "-m"}, withArg: []string{"-W", "-X", "-Q"}},
	"perl":   {inline: []string{"-e", "-E"}, withArg: []string{"-I", "-M", "-m", "-x"}},
	"ruby":   {inline: []string{"-e"}, withArg: []string{"-I", "-r", "-C", "-E"}},
	"node":   {inline: []string{"-e", "-p", "--eval", "--print"}, withArg: []string{"-r", "--require", "--import", "--loader"}},
	"php":    {inline: []string{"-r"}, withArg: []string{"-d", "-c", "-z"}},
	"lua":    {inline: []string{"-e"}, withArg: []string{"-l"}},
	"awk":    awk, "gawk": awk, "mawk": awk, "nawk": awk,
	"sed": {inline: []string{"-e", "--expression"}, scriptOpts: []string{"-f", "--file"}, withArg: []string{"-l"}, codeOperand: true},
	// A shell's builtins that run a file in the shell itself.
	".": {}, "source": {},
}

// wrapper is how a program that runs another command takes it.
type wrapper struct {
	// withArg are the options that take the next argument as theirs.
	withArg []string
	// operands is how many operands of its own come before the command
	// (timeout's duration, taskset's mask, flock's lock file).
	operands int
	// assignments: NAME=value words before the command are its (env).
	assignments bool
	// inline is an option whose argument is a shell string (flock -c).
	inline string
}

var wrappers = map[string]wrapper{
	"env":     {withArg: []string{"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, assignments: true},
	"nice":    {withArg: []string{"-n", "--adjustment"}},
	"nohup":   {},
	"setsid":  {},
	"stdbuf":  {withArg: []string{"-i", "-o", "-e", "--input", "--output", "--error"}},
	"timeout": {withArg: []string{"-s", "--signal", "-k", "--kill-after"}, operands: 1},
	"ionice":  {withArg: []string{"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}},
	"taskset": {withArg: []string{"-p", "--pid"}, operands: 1},
	"chrt":    {withArg: []string{"-T", "-P", "-D"}, operands: 1},
	"flock":   {withArg: []string{"-w", "--timeout", "-E", "--conflict-exit-code"}, operands: 1, inline: "-c"},
	"sudo":    {withArg: []string{"-u", "--user", "-g", "--group", "-C", "--close-from", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type", "-D", "--chdir", "-U", "--other-user"}, assignments: true},
	"doas":    {withArg: []string{"-u", "-C"}},
	"exec":    {withArg: []string{"-a"}},
	"command": {}, "builtin": {}, "time": {withArg: []string{"-f", "--format", "-o", "--output"}},
	"xargs": {withArg: []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars"}},
}

// defaultPath is where a hook without PATH in its env finds a command:
// what sh and the C library's execvp use then, together.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// maxCommandDepth bounds how far hookFiles follows commands into
// wrappers and shell strings.
const maxCommandDepth = 5

// interpreterName is the name of an interpreter's executable without its
// version: python3.11 and python3 are python.
func interpreterName(p string) string {
	return strings.TrimRight(filepath.Base(p), "0123456789.")
}

// maxHookLookups bounds the work hookFiles does for one bundle, in path
// components resolved: the hooks and their strings are the bundle's, and
// an untrusted bundle must not make create spend seconds deciding (a
// megabyte of "a1;a2;…" in one sh -c, each command looked up in every
// PATH directory). A real hook needs a few dozen.
const maxHookLookups = 1 << 14

// pathMax is Linux's PATH_MAX, the longest path exec or open takes (other
// systems take less).
const pathMax = 4096

// hookFiles lists the host files the hooks of s run or read as code, for
// the evaluator's bundle.hook-writable rule: each hook's executable, the
// interpreter its #! line names, the script an interpreter is given, and
// the same of every command a wrapper or a shell string of it runs. vetto's
// own entries are not run, and not listed. A bundle whose hooks name more
// than maxHookLookups is refused as bad input.
func hookFiles(s *specs.Spec) ([]launch.HookFile, error) {
	if s.Hooks == nil {
		return nil, nil
	}
	var out []launch.HookFile
	spent := 0
	for _, kind := range []struct {
		name  string
		hooks []specs.Hook
	}{
		{"prestart", s.Hooks.Prestart}, //nolint:staticcheck // deprecated in the spec, still run
		{"createRuntime", s.Hooks.CreateRuntime}, {"createContainer", s.Hooks.CreateContainer},
		{"startContainer", s.Hooks.StartContainer}, {"poststart", s.Hooks.Poststart}, {"poststop", s.Hooks.Poststop},
	} {
		i := 0 // the hook's place in the bundle's list
		for _, h := range kind.hooks {
			if spec.IsRuntimeHook(h, kind.name) {
				continue // vetto's own: recognised, never executed
			}
			w := commandWalker{hook: fmt.Sprintf("%s hook %d's", kind.name, i), path: envPath(h.Env), spent: &spent}
			i++
			args := h.Args
			if len(args) == 0 {
				args = []string{h.Path}
			}
			for _, kv := range h.Env {
				w.assign(kv)
			}
			w.command(h.Path, args, 0)
			if spent > maxHookLookups {
				return nil, Errorf(ErrInvalidInput, "%s hook %d: the hooks' command lines name more files than vetto-runtime checks for the container's write access (%d path components): put the commands in a script the hook runs", kind.name, i-1, maxHookLookups)
			}
			out = append(out, w.files...)
		}
	}
	return out, nil
}

// envPath is the PATH of env, the default when it sets none.
func envPath(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return defaultPath
}

// commandWalker collects the files one hook runs.
type commandWalker struct {
	hook  string // "poststop hook 0's"
	path  string // the hook's PATH
	files []launch.HookFile
	spent *int // path components resolved, for all hooks (maxHookLookups)
}

// add names p, what it resolves to as far as it exists and each symlink on
// its way. A path longer than the kernel takes is no file anything execs
// or opens.
func (w *commandWalker) add(what, p string) {
	if len(p) >= pathMax || *w.spent > maxHookLookups {
		return
	}
	*w.spent += 1 + strings.Count(p, "/")
	w.files = append(w.files, launch.HookFile{What: what, Real: realAsFar(p)})
	w.files = append(w.files, symlinksOnPath(what, p)...)
}

// command follows one command line: name is what is executed (a path, or
// a name looked up in PATH), argv its arguments with argv[0].
func (w *commandWalker) command(name string, argv []string, depth int) {
	if name == "" || depth > maxCommandDepth || *w.spent > maxHookLookups {
		return
	}
	*w.spent++
	what := w.hook + " executable"
	if depth > 0 {
		what = w.hook + " command"
	}
	switch {
	case filepath.IsAbs(name):
		w.add(what, name)
		w.interpreter(name, depth)
	case depth > 0 && !strings.Contains(name, "/") && !isShellWord(name):
		w.lookup(what, name, depth)
	}
	base := interpreterName(name)
	switch name {
	case ".", "source":
		base = "."
	case "export", "readonly", "local", "declare", "typeset":
		for _, a := range argv[1:] {
			if isAssignment(a) {
				w.assign(a)
			}
		}
		return
	case "eval":
		w.shellString(strings.Join(argv[1:], " "), depth)
		return
	}
	if filepath.Base(name) == "busybox" && len(argv) > 1 {
		// busybox APPLET ARGS: the applet is the program.
		w.command(argv[1], argv[1:], depth+1)
		return
	}
	if wr, ok := wrappers[filepath.Base(name)]; ok {
		w.wrapped(wr, argv, depth)
		return
	}
	if in, ok := interpreters[base]; ok {
		w.interpreted(in, argv, depth)
	}
}

// interpreter follows the #! line of the file at p as the kernel runs
// it: the interpreter, given its one argument and p. Its own operand is p
// itself, named already; what an interpreter such as env then runs
// (#!/usr/bin/env bash: bash, found through PATH) is followed too.
func (w *commandWalker) interpreter(p string, depth int) {
	interp, arg := shebang(p)
	if interp == "" || depth >= maxCommandDepth {
		return
	}
	w.add(w.hook+" interpreter (#!)", interp)
	argv := []string{interp}
	if arg != "" {
		argv = append(argv, arg)
	}
	w.interpreter(interp, depth+1)
	if wr, ok := wrappers[filepath.Base(interp)]; ok {
		w.wrapped(wr, append(argv, p), depth+1)
	}
}

// isShellWord says whether name is a shell builtin or keyword that runs
// nothing from a file by that name.
func isShellWord(name string) bool {
	switch name {
	case ".", "source", "exec", "command", "builtin", "time", "eval", "cd", "echo", "printf", "true", "false", "exit", "return",
		"set", "unset", "export", "read", "test", "[", "shift", "trap", "wait", "umask", "ulimit", "local", "readonly", ":":
		return true
	}
	return false
}

// lookup names each place in PATH where a file called name would be run
// instead of the one found now: every directory up to the one that has
// it, or every one when none has.
func (w *commandWalker) lookup(what, name string, depth int) {
	for _, dir := range filepath.SplitList(w.path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if *w.spent > maxHookLookups {
			return
		}
		p := filepath.Join(dir, name)
		w.add(what+" "+name+" (through PATH)", p)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			w.interpreter(p, depth)
			return
		}
	}
}

// interpreted follows an interpreter's script, or its code string.
func (w *commandWalker) interpreted(in interpreter, argv []string, depth int) {
	args := argv[min(1, len(argv)):]
	// A shell's -c is a flag among its options (sh -c -e 'cmd', sh -ec
	// -- 'cmd'): its first operand is then the string.
	inline := false
	operand := func(a string) {
		switch {
		case inline:
			w.shellString(a, depth)
		case in.codeOperand:
		case filepath.IsAbs(a):
			w.add(w.hook+" script", a)
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				operand(args[i+1])
			}
			return
		case a == "-":
			return // the script is its stdin
		case in.shell && isShortCluster(a) && strings.ContainsRune(a, 'c'):
			inline = true
		case slices.Contains(in.inline, a):
			return // python -c CODE, -m MODULE
		case in.shell && (a == "--rcfile" || a == "--init-file"):
			// bash runs the file before anything else.
			if i+1 < len(args) && filepath.IsAbs(args[i+1]) {
				w.add(w.hook+" script", args[i+1])
			}
			i++
		case slices.Contains(in.scriptOpts, a):
			if i+1 < len(args) && filepath.IsAbs(args[i+1]) {
				w.add(w.hook+" script", args[i+1])
			}
			return
		case slices.Contains(in.withArg, a):
			i++
		case strings.HasPrefix(a, "-"), in.shell && strings.HasPrefix(a, "+"):
		default:
			operand(a)
			return
		}
	}
}

// isShortCluster: -e, -ex, -xec; not --long, not - alone.
func isShortCluster(a string) bool {
	return len(a) > 1 && a[0] == '-' && a[1] != '-'
}

// wrapped follows the command a wrapper runs.
func (w *commandWalker) wrapped(wr wrapper, argv []string, depth int) {
	args := argv[min(1, len(argv)):]
	operands := wr.operands
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			args = args[i+1:]
			i = -1
			if operands == 0 {
				if len(args) > 0 {
					w.command(args[0], args, depth+1)
				}
				return
			}
		case wr.inline != "" && a == wr.inline:
			if i+1 < len(args) {
				w.shellString(args[i+1], depth)
			}
			return
		case (a == "-S" || a == "--split-string") && slices.Contains(wr.withArg, a) && i+1 < len(args):
			// env -S 'sh /data/x.sh': the string is the command line.
			rest := append(strings.Fields(args[i+1]), args[i+2:]...)
			if len(rest) > 0 {
				w.command(rest[0], rest, depth+1)
			}
			return
		case strings.HasPrefix(a, "-S") && slices.Contains(wr.withArg, "-S"):
			// #!/usr/bin/env -S bash -x: the kernel passes "-S bash -x"
			// as one argument.
			rest := append(strings.Fields(a[2:]), args[i+1:]...)
			if len(rest) > 0 {
				w.command(rest[0], rest, depth+1)
			}
			return
		case slices.Contains(wr.withArg, a):
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		case wr.assignments && isAssignment(a):
			w.assign(a)
		case operands > 0:
			operands--
		default:
			w.command(a, args[i:], depth+1)
			return
		}
	}
}

// shellString follows each command a shell string runs, with the
// assignments before it taken as its environment.
func (w *commandWalker) shellString(s string, depth int) {
	for _, argv := range shellCommands(s) {
		for len(argv) > 0 && isAssignment(argv[0]) {
			w.assign(argv[0])
			argv = argv[1:]
		}
		if len(argv) > 0 {
			w.command(argv[0], argv, depth+1)
		}
	}
}

// codeEnv are the variables of an environment that name code the
// programs of a hook load or run: a file (LD_PRELOAD, BASH_ENV), or
// directories searched for it (LD_LIBRARY_PATH, PYTHONPATH). Such a path
// in a directory the container writes is its code, run as root.
var codeEnv = map[string]bool{
	"LD_PRELOAD": true, "LD_AUDIT": true, "LD_LIBRARY_PATH": true, "GCONV_PATH": true,
	"BASH_ENV": true, "ENV": true,
	"PYTHONPATH": true, "PYTHONHOME": true, "PYTHONSTARTUP": true, "PYTHONUSERBASE": true,
	"PERL5LIB": true, "PERLLIB": true, "RUBYLIB": true, "NODE_PATH": true,
	"LUA_PATH": true, "LUA_CPATH": true,
}

// assign takes one NAME=value of a hook's environment: PATH is where its
// commands are looked up; a codeEnv variable names each absolute path in
// its value (lists split at colons, spaces and semicolons; a Lua pattern
// by its directory); NODE_OPTIONS the modules its --require and --import
// load.
func (w *commandWalker) assign(kv string) {
	name, value, ok := strings.Cut(kv, "=")
	if !ok {
		return
	}
	switch {
	case name == "PATH":
		w.path = value
	case name == "NODE_OPTIONS":
		f := strings.Fields(value)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "-r" || f[i] == "--require" || f[i] == "--import" {
				if filepath.IsAbs(f[i+1]) {
					w.add(w.hook+" environment's "+name, f[i+1])
				}
			}
		}
	case codeEnv[name]:
		for _, p := range strings.FieldsFunc(value, func(r rune) bool { return r == ':' || r == ' ' || r == ';' }) {
			if strings.Contains(p, "?") {
				p = filepath.Dir(p) // LUA_PATH's /dir/?.lua
			}
			if filepath.IsAbs(p) {
				w.add(w.hook+" environment's "+name, p)
			}
		}
	}
}

// shellCommands splits a shell string into its simple commands' words,
// as far as can be known without running it: quotes and backslashes are
// undone; ; & | && || ( ) { } newlines, $( and backquotes end a command;
// a redirection's target is no word of the command; keywords (if, then,
// while, !, …) and NAME=value assignments before a command are dropped;
// for and case lists are not commands. What a variable or a glob expands
// to is not known, and its word stays as it is written.
func shellCommands(s string) [][]string {
	var (
		out      [][]string
		cur      []string
		word     strings.Builder
		inWord   bool
		redirect bool // the next word is a redirection's target
	)
	endWord := func() {
		if !inWord {
			return
		}
		wd := word.String()
		word.Reset()
		inWord = false
		if redirect {
			redirect = false
			return
		}
		// Before the command word: a keyword goes; NAME=value stays, the
		// command's environment, for shellString to take.
		if !slices.ContainsFunc(cur, func(w string) bool { return !isAssignment(w) }) && shellKeyword(wd) {
			return
		}
		cur = append(cur, wd)
	}
	endCommand := func() {
		endWord()
		redirect = false
		if len(cur) > 0 && cur[0] != "for" && cur[0] != "case" && cur[0] != "select" {
			out = append(out, cur)
		}
		cur = nil
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\' && i+1 < len(rs):
			i++
			word.WriteRune(rs[i])
			inWord = true
		case c == '\'':
			inWord = true
			for i++; i < len(rs) && rs[i] != '\''; i++ {
				word.WriteRune(rs[i])
			}
		case c == '"':
			inWord = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) {
					i++
				}
				word.WriteRune(rs[i])
			}
		case c == '$' && i+1 < len(rs) && rs[i+1] == '(':
			i++
			endCommand()
		case strings.ContainsRune(";&|(){}`\n", c):
			endCommand()
		case c == '<' || c == '>':
			// 2>file: the 2 was the redirection's, not a word.
			if inWord && strings.Trim(word.String(), "0123456789") == "" {
				word.Reset()
				inWord = false
			}
			endWord()
			for i+1 < len(rs) && strings.ContainsRune("<>&|", rs[i+1]) {
				i++
			}
			redirect = true
		case c == ' ' || c == '\t':
			endWord()
		case c == '#' && !inWord:
			for i+1 < len(rs) && rs[i+1] != '\n' {
				i++
			}
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	endCommand()
	return out
}

// shellKeyword: a reserved word that comes before a command.
func shellKeyword(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "esac", "in":
		return true
	}
	return false
}

// isAssignment: NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// symlinksOnPath names each symlink on the way to the absolute path p as
// the entry of the directory it is in: from a directory the container can
// write, it can point the name at a file of its own once the check is
// done. what names p for messages.
func symlinksOnPath(what, p string) []launch.HookFile {
	var out []launch.HookFile
	for q := filepath.Clean(p); q != "/" && q != "."; q = filepath.Dir(q) {
		if fi, err := os.Lstat(q); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			entry := filepath.Join(realAsFar(filepath.Dir(q)), filepath.Base(q))
			out = append(out, launch.HookFile{What: what + " (through the symlink " + q + ")", Real: entry})
		}
	}
	return out
}

// realAsFar is p with the symlinks of its longest existing prefix
// resolved: a script the container is yet to make, behind a symlink to
// the directory it will make it in, is named where it will be.
func realAsFar(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == "/" {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// shebang is the interpreter the #! line of the regular file at p names
// and its one optional argument (the kernel passes the rest of the line
// whole), "" if none. Opened without blocking and read only if regular:
// a FIFO put at a hook's path must not hang the create that looks at it.
func shebang(p string) (interp, arg string) {
	if !filepath.IsAbs(p) {
		return "", ""
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", ""
	}
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	line, _, _ := bytes.Cut(buf[:n], []byte{'\n'})
	rest, ok := bytes.CutPrefix(line, []byte("#!"))
	if !ok {
		return "", ""
	}
	interp, arg, _ = strings.Cut(strings.TrimLeft(string(rest), " \t"), " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	return interp, strings.TrimSpace(arg)
}
