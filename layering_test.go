package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/vetto-dev/vetto-runtime"

// rules is docs/architecture.md: spec ← hooks ← runtime ← linux|darwin|windows ←
// main, libcontainer only in linux/, no CLI library below main, and
// integration/ imports nothing of ours. Each package lists the module
// packages and third-party prefixes it may import; the standard library is
// always allowed.
var rules = map[string]struct {
	ours       []string
	thirdParty []string
}{
	"spec": {nil, []string{"github.com/opencontainers/runtime-spec/", "github.com/BurntSushi/toml"}},
	// landlock is a leaf beside spec: the dev.vetto.landlock ruleset, the
	// ABI matrix and the thread restriction, shared by the plan (runtime),
	// the pre-launch checks (hooks) and the exec shim (linux). It imports
	// nothing of ours.
	"landlock": {nil, []string{"github.com/landlock-lsm/go-landlock/", "golang.org/x/sys/"}},
	// shim is the pre-exec step's config, written by the backend, read by
	// the pre-launch check and by the step in the init: a leaf.
	"shim": {nil, nil},
	// relay is the egress relay's decisions and servers: a leaf, run by
	// the relay process the runtime starts.
	"relay": {nil, []string{"golang.org/x/net/"}},
	"hooks": {[]string{"spec", "landlock", "shim"}, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/"}},
	// runtime/launch is the one launch-policy evaluator: pure, below the
	// lifecycle that calls it.
	"runtime/launch": {[]string{"spec", "hooks", "landlock"}, []string{"github.com/opencontainers/runtime-spec/"}},
	// hostpolicy is the host side of policy mode: it reads the host for
	// the compiler and checks compiled bundles against it at create.
	"hostpolicy": {[]string{"spec"}, []string{"github.com/opencontainers/runtime-spec/"}},
	// report renders audit logs: it reads events, it runs nothing.
	"report":  {[]string{"hooks"}, nil},
	"runtime": {[]string{"spec", "hooks", "landlock", "runtime/launch", "hostpolicy", "shim"}, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/", "github.com/BurntSushi/toml", "github.com/gowebpki/jcs"}},
	// linux runs the egress relay (relay) in a process it hardens itself:
	// libseccomp for its filter (with TSYNC, which libcontainer's seccomp
	// ignores), psx for per-thread state on every thread.
	"linux":       {[]string{"spec", "hooks", "runtime", "landlock", "shim", "relay"}, []string{"github.com/opencontainers/", "github.com/containerd/console", "github.com/sirupsen/logrus", "golang.org/x/sys/", "github.com/seccomp/libseccomp-golang", "kernel.org/pub/linux/libs/security/libcap/psx"}},
	"darwin":      {[]string{"spec", "hooks", "runtime"}, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/"}},
	"windows":     {[]string{"spec", "hooks", "runtime"}, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/"}},
	"integration": {nil, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/"}},
}

// pure packages decide from their inputs alone: no syscalls, files,
// environment, clock or network of their own (docs/architecture.md), so that what
// they decide can be tested as a table and fuzzed.
var pure = map[string]bool{"spec": true, "runtime/launch": true}

// impure are the standard packages a pure package may not import.
var impure = map[string]bool{"os": true, "os/exec": true, "os/user": true, "syscall": true, "time": true, "net": true, "io/fs": true, "io/ioutil": true}

type listedPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Standard     bool
}

func TestLayering(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-tags", "seccomp", "-json", "./...")
			cmd.Env = append(os.Environ(), "GOOS="+goos)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			dec := json.NewDecoder(strings.NewReader(string(out)))
			seen := 0
			for dec.More() {
				var p listedPackage
				if err := dec.Decode(&p); err != nil {
					t.Fatal(err)
				}
				name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
				if name == "" {
					continue // main may import anything
				}
				rule, ok := rules[name]
				if !ok {
					t.Errorf("package %s has no layering rule; add one to rules", name)
					continue
				}
				seen++
				if pure[name] {
					for _, imp := range p.Imports {
						if impure[imp] || strings.HasPrefix(imp, "golang.org/x/sys") {
							t.Errorf("%s is pure but imports %s", name, imp)
						}
					}
				}
				imports := append(append(append([]string{}, p.Imports...), p.TestImports...), p.XTestImports...)
				for _, imp := range imports {
					if err := checkImport(name, imp, rule.ours, rule.thirdParty); err != "" {
						t.Errorf("%s imports %s: %s", name, imp, err)
					}
				}
			}
			if seen < 4 {
				t.Fatalf("checked only %d packages; go list output changed?", seen)
			}
		})
	}
}

func checkImport(pkg, imp string, ours, thirdParty []string) string {
	if strings.HasPrefix(imp, module+"/") {
		target := strings.TrimPrefix(imp, module+"/")
		if target == pkg {
			return ""
		}
		for _, o := range ours {
			if o == target {
				return ""
			}
		}
		return "breaks the layering of docs/architecture.md"
	}
	first := strings.SplitN(imp, "/", 2)[0]
	if !strings.Contains(first, ".") {
		return "" // standard library
	}
	if strings.HasPrefix(imp, "github.com/opencontainers/runc") && pkg != "linux" {
		return "libcontainer is imported only inside linux/"
	}
	for _, tp := range thirdParty {
		if strings.HasPrefix(imp, tp) || imp == strings.TrimSuffix(tp, "/") {
			return ""
		}
	}
	return "third-party import not allowed here"
}

// Only main.go may exit the process, and nothing below main panics: a
// runtime that dies half-way leaves containers it cannot account for.
func TestNoExitOrPanicBelowMain(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || path == "third_party") {
			// third_party holds other projects' code (patched runc), not ours.
			return filepath.SkipDir
		}
		// testdata holds programs the tests build and run inside
		// containers (integration/testdata/sysprobe), with their own main:
		// not the runtime's code.
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == "main.go" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "//") {
				continue
			}
			if strings.Contains(line, "os.Exit(") || strings.Contains(line, "panic(") {
				t.Errorf("%s:%d: %s (only main.go may exit; nothing panics)", path, n, line)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckImport(t *testing.T) {
	tests := []struct {
		pkg, imp string
		ours     []string
		third    []string
		ok       bool
	}{
		{"runtime", module + "/hooks", []string{"spec", "hooks"}, nil, true},
		{"runtime", module + "/linux", []string{"spec", "hooks"}, nil, false},
		{"spec", module + "/runtime", nil, nil, false},
		{"runtime", "github.com/urfave/cli/v2", nil, []string{"golang.org/x/sys/"}, false},
		{"runtime", "github.com/opencontainers/runc/libcontainer", nil, []string{"github.com/opencontainers/"}, false},
		{"linux", "github.com/opencontainers/runc/libcontainer", nil, []string{"github.com/opencontainers/"}, true},
		{"integration", module + "/runtime", nil, nil, false},
		{"spec", "encoding/json", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.pkg+"->"+tt.imp, func(t *testing.T) {
			got := checkImport(tt.pkg, tt.imp, tt.ours, tt.third) == ""
			if got != tt.ok {
				t.Fatalf("checkImport(%s, %s) allowed=%v, want %v", tt.pkg, tt.imp, got, tt.ok)
			}
		})
	}
}
