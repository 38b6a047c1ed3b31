package windows

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// envValue is name's value in env, compared without case as Windows does.
func envValue(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(env[i], "=")
		if ok && strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// findProgram finds the program the process runs, as runc resolves
// args[0] inside the container: a name with a separator or a drive is
// taken relative to cwd; a bare name is searched in the spec's PATH,
// trying the spec's PATHEXT (default .COM;.EXE;.BAT;.CMD) when it has no
// extension. Never the holder's own directory or current directory,
// which CreateProcess would search first when given no application name.
// exists reports a regular file as the host sees it.
func findProgram(name, cwd string, env []string, exists func(string) bool) (string, error) {
	notFound := runtime.WithKind(runtime.ErrNotFound, fmt.Errorf("exec: %q: executable file not found in $PATH", name))
	if name == "" {
		return "", notFound
	}
	exts := []string{".COM", ".EXE", ".BAT", ".CMD"}
	if v, ok := envValue(env, "PATHEXT"); ok && v != "" {
		exts = nil
		for _, e := range strings.Split(v, ";") {
			if e = strings.TrimSpace(e); e != "" {
				exts = append(exts, e)
			}
		}
	}
	candidates := func(p string) []string {
		base := p[strings.LastIndexAny(p, `\/`)+1:]
		if strings.Contains(base, ".") {
			return []string{p}
		}
		out := make([]string, 0, len(exts))
		for _, e := range exts {
			out = append(out, p+e)
		}
		return out
	}
	try := func(p string) (string, bool) {
		for _, c := range candidates(p) {
			if exists(c) {
				return c, true
			}
		}
		return "", false
	}
	if strings.ContainsAny(name, `\/:`) {
		p := name
		if _, ok := cleanPath(p); !ok {
			p = joinPath(cwd, p)
		}
		c, ok := cleanPath(p)
		if !ok {
			return "", notFound
		}
		if found, ok := try(c); ok {
			return found, nil
		}
		return "", runtime.WithKind(runtime.ErrNotFound, errors.New("exec: "+fmt.Sprintf("%q", name)+": no such file or directory"))
	}
	path, _ := envValue(env, "PATH")
	for _, dir := range strings.Split(path, ";") {
		d, ok := cleanPath(strings.Trim(strings.TrimSpace(dir), `"`))
		if !ok {
			continue // relative PATH entries would depend on the holder's directory
		}
		if found, ok := try(joinPath(d, name)); ok {
			return found, nil
		}
	}
	return "", notFound
}
