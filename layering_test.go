package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/vetto-dev/vetto-runtime"

// rules is docs/architecture.md: spec ← hooks ← runtime ← linux|darwin|windows ←
// platform ← cli ← main, libcontainer only in linux/, the CLI library only
// in cli/, nothing imports cli/ but main, and integration/ imports nothing
// of ours. Each package lists the module packages and third-party prefixes
// it may import; the standard library is always allowed. "" is main's
// main.go; the root package's tests are the repository's own (schema,
// docs, claims, layering) and may import anything.
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
	// hooks/canary is the container's side of the canaries (the messages
	// and the attempts), which the container's init runs: a leaf.
	"hooks/canary": {nil, []string{"golang.org/x/sys/"}},
	"hooks":        {[]string{"spec", "landlock", "shim", "hooks/canary"}, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/"}},
	// runtime/launch is the one launch-policy evaluator: pure, below the
	// lifecycle that calls it.
	"runtime/launch": {[]string{"spec", "hooks", "landlock"}, []string{"github.com/opencontainers/runtime-spec/"}},
	// hostpolicy is the host side of policy mode: it reads the host for
	// the compiler and checks compiled bundles against it at create.
	"hostpolicy": {[]string{"spec"}, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/"}},
	// report renders audit logs: it reads events, it runs nothing.
	"report": {[]string{"hooks"}, nil},
	// runtime/sdnotify relays a caller's NOTIFY_SOCKET out of a
	// container (sd_notify): a leaf the lifecycle uses.
	"runtime/sdnotify": {nil, []string{"golang.org/x/sys/"}},
	"runtime":          {[]string{"spec", "hooks", "hooks/canary", "landlock", "runtime/launch", "runtime/sdnotify", "hostpolicy", "shim"}, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/", "github.com/BurntSushi/toml", "github.com/gowebpki/jcs"}},
	// linux/containerinit is a container's init: libcontainer's and the
	// pre-exec step, with nothing of the runtime it does not run, so that
	// the init executable built from it (cmd/vetto-runtime-init) is small.
	"linux/containerinit": {[]string{"landlock", "shim", "hooks/canary"}, []string{"github.com/opencontainers/runc/", "golang.org/x/sys/"}},
	// cmd/vetto-runtime-init is that executable's main: the init and
	// nothing else.
	"cmd/vetto-runtime-init": {[]string{"linux/containerinit"}, nil},
	// linux/relaywire is what passes between the runtime and a relay
	// process: a leaf, so the runtime can start relays without linking
	// the relay.
	"linux/relaywire": {nil, nil},
	// linux/relayproc is the relay process (cmd/vetto-runtime-relay): the
	// relay in a process it hardens itself, libseccomp for its filter
	// (with TSYNC, which libcontainer's seccomp ignores), psx for
	// per-thread state on every thread.
	"linux/relayproc":         {[]string{"relay", "linux/relaywire", "landlock"}, []string{"golang.org/x/sys/", "github.com/seccomp/libseccomp-golang", "kernel.org/pub/linux/libs/security/libcap/psx"}},
	"cmd/vetto-runtime-relay": {[]string{"linux/relayproc"}, nil},
	// linux is libcontainer's backend; it starts relays from the relay
	// executable and never imports the relay (TestRuntimeLinksNoRelay).
	"linux":       {[]string{"spec", "hooks", "hooks/canary", "runtime", "landlock", "shim", "linux/relaywire"}, []string{"github.com/opencontainers/", "github.com/containerd/console", "github.com/sirupsen/logrus", "golang.org/x/sys/", "github.com/seccomp/libseccomp-golang"}},
	"darwin":      {[]string{"spec", "hooks", "hooks/canary", "runtime"}, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/"}},
	"windows":     {[]string{"spec", "hooks", "hooks/canary", "runtime"}, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/"}},
	"integration": {nil, []string{"github.com/opencontainers/runtime-spec/", "golang.org/x/sys/"}},
	// platform picks the backend by GOOS and runs the processes the
	// runtime re-executes itself as (init, shims, relay, probe).
	"platform": {[]string{"hooks", "hooks/canary", "runtime", "linux", "linux/containerinit", "linux/relaywire", "linux/relayproc", "darwin", "windows"}, []string{"github.com/sirupsen/logrus"}},
	// cli is the command line: urfave/cli only here; it drives the core
	// and prints what it returns.
	"cli": {[]string{"spec", "hooks", "runtime", "runtime/launch", "hostpolicy", "report", "platform"}, []string{"github.com/urfave/cli/v2", "github.com/opencontainers/runtime-spec/", "github.com/sirupsen/logrus"}},
	// main builds the command line and exits.
	"": {[]string{"cli", "platform"}, nil},
}

// pure packages decide from their inputs alone: no syscalls, files,
// environment, clock or network of their own (docs/architecture.md), so that what
// they decide can be tested as a table and fuzzed.
var pure = map[string]bool{"spec": true, "runtime/launch": true}

// impure are the standard packages a pure package may not import.
var impure = map[string]bool{"os": true, "os/exec": true, "os/user": true, "syscall": true, "time": true, "net": true, "io/fs": true, "io/ioutil": true}

// goFile is one parsed Go file of ours: its package (the directory below
// the module root, "" for main) and whether it is a test file.
type goFile struct {
	path, pkg string
	test      bool
	ast       *ast.File
}

// ourGoFiles parses every .go file of the module's packages, whatever its
// build constraints (a file for another GOOS or behind a tag must keep the
// layering too): not third_party (other projects' code, patched runc, its
// own module), not testdata (programs the tests build and run inside
// containers, with their own main), not hidden directories.
func ourGoFiles(t *testing.T) (*token.FileSet, []goFile) {
	t.Helper()
	fset := token.NewFileSet()
	var files []goFile
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || path == "third_party" || path == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		files = append(files, goFile{path: path, pkg: pkg, test: strings.HasSuffix(path, "_test.go"), ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, files
}

func importPath(spec *ast.ImportSpec) string {
	p, err := strconv.Unquote(spec.Path.Value)
	if err != nil {
		return spec.Path.Value
	}
	return p
}

// layeringErrors is what TestLayering reports for one file: each import
// its package's rule does not allow, and, in a pure package's non-test
// files, each impure standard package or golang.org/x/sys.
func layeringErrors(fset *token.FileSet, f goFile) []string {
	rule, ok := rules[f.pkg]
	if !ok {
		return []string{fmt.Sprintf("%s: package %s has no layering rule; add one to rules", fset.Position(f.ast.Package), f.pkg)}
	}
	var errs []string
	for _, spec := range f.ast.Imports {
		imp := importPath(spec)
		if pure[f.pkg] && !f.test && (impure[imp] || imp == "golang.org/x/sys" || strings.HasPrefix(imp, "golang.org/x/sys/")) {
			errs = append(errs, fmt.Sprintf("%s: %s is pure but imports %s", fset.Position(spec.Pos()), f.pkg, imp))
		}
		if err := checkImport(f.pkg, imp, rule.ours, rule.thirdParty); err != "" {
			errs = append(errs, fmt.Sprintf("%s: %s imports %s: %s", fset.Position(spec.Pos()), f.pkg, imp, err))
		}
	}
	return errs
}

// TestLayering reads each file's imports from its syntax tree: tests
// (internal and external) are held to their package's rule too; the pure
// rule is for the files the package builds from.
func TestLayering(t *testing.T) {
	fset, files := ourGoFiles(t)
	seen := map[string]bool{}
	for _, f := range files {
		if f.pkg == "" && f.test {
			continue // the repository's own tests may import anything
		}
		seen[f.pkg] = true
		for _, e := range layeringErrors(fset, f) {
			t.Error(e)
		}
	}
	for pkg := range rules {
		if !seen[pkg] {
			t.Errorf("rules name %s, which has no Go files: a stale rule, or the walk missed it", pkg)
		}
	}
	if len(seen) < 4 {
		t.Fatalf("checked only %d packages; the walk changed?", len(seen))
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
	if strings.HasPrefix(imp, "github.com/opencontainers/runc") && pkg != "linux" && !strings.HasPrefix(pkg, "linux/") {
		return "libcontainer is imported only inside linux/"
	}
	for _, tp := range thirdParty {
		if strings.HasPrefix(imp, tp) || imp == strings.TrimSuffix(tp, "/") {
			return ""
		}
	}
	return "third-party import not allowed here"
}

// The runtime's own binary, as make build builds it, links none of the
// relay: its HTTP, TLS and x509 stacks cost every command their package
// initialisers and page faults (docs/performance.md), and only a relay
// process serves them, from the embedded relay executable. A build
// without the embedinit tag is its own relay and links it; that one is
// not what ships.
func TestRuntimeLinksNoRelay(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the build's packages")
	}
	cmd := exec.Command("go", "list", "-e", "-deps", "-tags", "seccomp netgo osusergo urfave_cli_no_docs embedinit", ".")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list named %d packages; want the runtime's whole build", len(deps))
	}
	for _, d := range deps {
		switch d {
		case module + "/relay", module + "/linux/relayproc", "net/http", "crypto/tls", "crypto/x509", "golang.org/x/net/dns/dnsmessage":
			t.Errorf("the runtime's binary links %s: the relay's code belongs in the relay executable only", d)
		}
	}
}

// Only main imports the command line: a package below it that did would
// put flag parsing and output formatting back into the layers it drives.
func TestOnlyMainImportsCLI(t *testing.T) {
	for pkg, rule := range rules {
		for _, o := range rule.ours {
			if o == "cli" && pkg != "" {
				t.Errorf("the rule of %s lets it import cli: only main may", pkg)
			}
		}
	}
}

// exits says, for the standard packages whose functions end the process,
// which of their functions do.
var exits = map[string]func(name string) bool{
	"os":                    func(n string) bool { return n == "Exit" },
	"syscall":               func(n string) bool { return n == "Exit" },
	"golang.org/x/sys/unix": func(n string) bool { return n == "Exit" },
	"log": func(n string) bool {
		return strings.HasPrefix(n, "Fatal") || strings.HasPrefix(n, "Panic")
	},
}

// exitsAndPanics finds, in one file's syntax tree, the calls of panic and
// every use of os.Exit, syscall.Exit, unix.Exit and log.Fatal*/Panic*
// (called, deferred or taken as a value), through whatever name the file
// imports the package as, a dot import included. Comments and strings are
// not code, so they never match.
func exitsAndPanics(fset *token.FileSet, f *ast.File) []string {
	named := map[string]func(string) bool{} // local name -> exits
	var dotted []func(string) bool
	for _, spec := range f.Imports {
		is, ok := exits[importPath(spec)]
		if !ok {
			continue
		}
		name := path.Base(importPath(spec))
		if spec.Name != nil {
			name = spec.Name.Name
		}
		switch name {
		case "_":
		case ".":
			dotted = append(dotted, is)
		default:
			named[name] = is
		}
	}
	var found []string
	report := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				if is, ok := named[x.Name]; ok && is(n.Sel.Name) {
					report(n, x.Name+"."+n.Sel.Name)
				}
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok {
				if id.Name == "panic" {
					report(n, "panic")
				}
				for _, is := range dotted {
					if is(id.Name) {
						report(n, id.Name+" (dot import)")
					}
				}
			}
		}
		return true
	})
	return found
}

// mainFiles are the main.go of each binary: the runtime's, the init
// executable's (which exits only when run by hand, not as an init) and the
// relay executable's.
var mainFiles = map[string]bool{"main.go": true, "cmd/vetto-runtime-init/main.go": true, "cmd/vetto-runtime-relay/main.go": true}

// Only main.go may exit the process, and nothing below main panics: a
// runtime that dies half-way leaves containers it cannot account for.
// Tests may (t.Fatal, TestMain).
func TestNoExitOrPanicBelowMain(t *testing.T) {
	fset, files := ourGoFiles(t)
	checked := 0
	for _, f := range files {
		if f.test || mainFiles[f.path] {
			continue
		}
		checked++
		for _, e := range exitsAndPanics(fset, f.ast) {
			t.Errorf("%s (only main.go may exit; nothing panics)", e)
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d files; the walk changed?", checked)
	}
}

// The finder itself: what it must catch and what it must leave alone.
func TestExitsAndPanicsFinder(t *testing.T) {
	tests := []struct {
		name, src string
		want      int
	}{
		{"os.Exit", "import \"os\"\nfunc f() { os.Exit(1) }", 1},
		{"aliased os", "import stdos \"os\"\nfunc f() { stdos.Exit(2) }", 1},
		{"dot os", "import . \"os\"\nfunc f() { Exit(2) }", 1},
		{"os.Exit as a value", "import \"os\"\nvar exit = os.Exit", 1},
		{"deferred", "import \"os\"\nfunc f() { defer os.Exit(0) }", 1},
		{"log.Fatal*", "import \"log\"\nfunc f() { log.Fatal(1); log.Fatalf(\"\"); log.Fatalln() }", 3},
		{"aliased log.Panicf", "import l \"log\"\nfunc f() { l.Panicf(\"x\") }", 1},
		{"unix.Exit", "import \"golang.org/x/sys/unix\"\nfunc f() { unix.Exit(1) }", 1},
		{"panic", "func f() { panic(\"x\") }", 1},
		{"in a closure", "func f() { go func() { panic(1) }() }", 1},
		{"comment and string", "import \"os\"\n// os.Exit(1), panic(x)\nvar s = \"os.Exit(1) panic(\"\nvar _ = os.Getpid", 0},
		{"another package's Exit", "import \"example.com/os\"\nfunc f() { os.Exit(1) }", 0},
		{"log.Printf", "import \"log\"\nfunc f() { log.Printf(\"\") }", 0},
		{"a method called panic", "type T struct{}\nfunc (T) panic() {}\nfunc f(t T) { t.panic() }", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package x\n"+tt.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if got := exitsAndPanics(fset, f); len(got) != tt.want {
				t.Fatalf("found %d %q, want %d", len(got), got, tt.want)
			}
		})
	}
}

// The file-level layering check on made-up files: a forbidden import of
// ours, libcontainer outside linux/, and a pure package's impure import,
// which its test files may have.
func TestLayeringErrors(t *testing.T) {
	tests := []struct {
		pkg, file, src string
		want           int
	}{
		{"spec", "a.go", "import \"os\"", 1},
		{"spec", "a.go", "import \"time\"", 1},
		{"spec", "a.go", "import \"syscall\"", 1},
		{"spec", "a.go", "import \"golang.org/x/sys/unix\"", 2}, // impure, and not in spec's third-party list
		{"spec", "a_test.go", "import (\"os\"; \"time\")", 0},
		{"runtime/launch", "a.go", "import \"os/exec\"", 1},
		{"spec", "a.go", "import \"" + module + "/hooks\"", 1},
		{"hooks", "a.go", "import \"" + module + "/spec\"", 0},
		{"runtime", "a.go", "import \"github.com/opencontainers/runc/libcontainer\"", 1},
		{"nosuch", "a.go", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.pkg+"/"+tt.file+" "+tt.src, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, tt.file, "package x\n"+tt.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			got := layeringErrors(fset, goFile{path: tt.file, pkg: tt.pkg, test: strings.HasSuffix(tt.file, "_test.go"), ast: f})
			if len(got) != tt.want {
				t.Fatalf("got %q, want %d errors", got, tt.want)
			}
		})
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
