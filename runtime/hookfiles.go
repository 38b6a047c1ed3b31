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

// scriptInterpreters are the programs whose first operand is the script
// they run — a hook "/bin/sh /data/cleanup.sh" runs what /data/cleanup.sh
// holds when it runs, whether or not it exists at create — with the
// options that give them the script as a string instead (sh -c).
var scriptInterpreters = map[string][]string{
	"sh": {"-c"}, "bash": {"-c"}, "dash": {"-c"}, "ash": {"-c"}, "ksh": {"-c"}, "zsh": {"-c"},
	"python": {"-c", "-m"}, "perl": {"-e", "-E"}, "ruby": {"-e"}, "node": {"-e", "-p"}, "php": {"-r"}, "lua": {"-e"},
}

// interpreterName is the name of an interpreter's executable without its
// version: python3.11 and python3 are python.
func interpreterName(p string) string {
	return strings.TrimRight(filepath.Base(p), "0123456789.")
}

// hookFiles lists the host files the hooks of s run or read, for the
// evaluator's bundle.hook-writable rule: each hook's executable, the
// interpreter its #! line names, and the script an interpreter hook
// (sh, python, …) is given. vetto's own entries are not run, and not
// listed. Relative paths are the runtime's PATH lookup
// and named nowhere here.
func hookFiles(s *specs.Spec) []launch.HookFile {
	if s.Hooks == nil {
		return nil
	}
	var out []launch.HookFile
	add := func(what, p string) {
		if !filepath.IsAbs(p) {
			return
		}
		out = append(out, launch.HookFile{What: what, Real: realAsFar(p)})
		out = append(out, symlinksOnPath(what, p)...)
	}
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
			hook := fmt.Sprintf("%s hook %d's", kind.name, i)
			i++
			add(hook+" executable", h.Path)
			if interp := shebang(h.Path); interp != "" {
				add(hook+" interpreter (#!)", interp)
			}
			if inline, ok := scriptInterpreters[interpreterName(h.Path)]; ok {
				if script := firstOperand(h.Args, inline); script != "" {
					add(hook+" script", script)
				}
			}
		}
	}
	return out
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

// shebang is the interpreter the #! line of the regular file at p names,
// "" if none. Opened without blocking and read only if regular: a FIFO
// put at a hook's path must not hang the create that looks at it.
func shebang(p string) string {
	if !filepath.IsAbs(p) {
		return ""
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	line, _, _ := bytes.Cut(buf[:n], []byte{'\n'})
	rest, ok := bytes.CutPrefix(line, []byte("#!"))
	if !ok {
		return ""
	}
	fields := strings.Fields(string(rest))
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// firstOperand is the first argument after argv[0] that is not an
// option, "" if one of inline (sh -c) gives the script as a string.
func firstOperand(args, inline []string) string {
	for _, a := range args[min(1, len(args)):] {
		switch {
		case slices.Contains(inline, a):
			return ""
		case strings.HasPrefix(a, "-"):
			continue
		}
		return a
	}
	return ""
}
