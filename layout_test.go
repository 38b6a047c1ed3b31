package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// modulePackages is every package of the module as `go list ./...` finds
// them: each directory with a .go file, "" for the root, leaving out
// testdata, hidden directories, bin/ and nested modules (third_party/).
func modulePackages(t *testing.T) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != "." {
			if strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata" || path == "bin" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		gos, _ := filepath.Glob(filepath.Join(path, "*.go"))
		if len(gos) > 0 {
			pkg := filepath.ToSlash(path)
			if pkg == "." {
				pkg = ""
			}
			pkgs = append(pkgs, pkg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// section is the text of README's "## name" section.
func section(doc, name string) (string, bool) {
	_, rest, ok := strings.Cut(doc, "\n## "+name+"\n")
	if !ok {
		return "", false
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
}

var (
	layoutEntry = regexp.MustCompile("(?m)^- `([^`]+)`")
	codeSpan    = regexp.MustCompile("`([^`]+)`")
)

// checkLayout compares README's Layout with the module's packages: each
// line "- `dir/`" names a package ("- `main.go`" the root), and there is
// one for each package; what the "Not Go packages:" paragraph names must
// be a directory that is none. isDir says whether a path is a directory.
func checkLayout(readme string, pkgs []string, isDir func(string) bool) []string {
	text, ok := section(readme, "Layout")
	if !ok {
		return []string{"README.md has no \"## Layout\" section"}
	}
	var problems []string
	listed := map[string]bool{}
	for _, m := range layoutEntry.FindAllStringSubmatch(text, -1) {
		name := m[1]
		pkg := strings.TrimSuffix(name, "/")
		switch {
		case name == "main.go":
			pkg = ""
		case !strings.HasSuffix(name, "/"):
			problems = append(problems, fmt.Sprintf("Layout entry `%s`: a package is written as its directory with a trailing /", name))
			continue
		}
		if listed[pkg] {
			problems = append(problems, fmt.Sprintf("Layout names `%s` twice", name))
		}
		listed[pkg] = true
		if !slices.Contains(pkgs, pkg) {
			problems = append(problems, fmt.Sprintf("Layout names `%s`, which is not a package of the module", name))
		}
	}
	for _, p := range pkgs {
		if !listed[p] {
			name := p + "/"
			if p == "" {
				name = "main.go"
			}
			problems = append(problems, fmt.Sprintf("package %s is not in README's Layout: add a line \"- `%s` — what it is\"", name, name))
		}
	}
	if _, rest, ok := strings.Cut(text, "Not Go packages:"); ok {
		for _, m := range codeSpan.FindAllStringSubmatch(rest, -1) {
			dir := strings.TrimSuffix(m[1], "/")
			if slices.Contains(pkgs, dir) {
				problems = append(problems, fmt.Sprintf("Layout says `%s` is not a Go package, but it is one", m[1]))
			} else if !isDir(dir) {
				problems = append(problems, fmt.Sprintf("Layout names `%s`, which does not exist", m[1]))
			}
		}
	}
	return problems
}

// TestLayout: README's Layout names every package of the module and
// nothing else.
func TestLayout(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := modulePackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages; the walk changed?", len(pkgs))
	}
	isDir := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
	for _, p := range checkLayout(string(readme), pkgs, isDir) {
		t.Error(p)
	}
}

func TestLayoutChecker(t *testing.T) {
	pkgs := []string{"", "cli", "runtime/launch"}
	isDir := func(p string) bool { return p == "docs" || slices.Contains(pkgs, p) }
	readme := func(lines string) string {
		return "# x\n\n## Layout\n\n" + lines + "\n## Next\n\n- `nope/` — outside the section\n"
	}
	good := "- `main.go` — m\n- `cli/` — c\n- `runtime/launch/` — l\n\nNot Go packages: `docs/`.\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"good", readme(good), ""},
		{"a package missing", readme("- `main.go` — m\n- `cli/` — c\n"), "package runtime/launch/ is not in README's Layout"},
		{"the root missing", readme("- `cli/` — c\n- `runtime/launch/` — l\n"), "package main.go is not in README's Layout"},
		{"one that does not exist", readme(good + "- `gone/` — g\n"), "Layout names `gone/`, which is not a package"},
		{"without the slash", readme("- `main.go` — m\n- `cli` — c\n- `runtime/launch/` — l\n"), "trailing /"},
		{"twice", readme(good + "- `cli/` — again\n"), "names `cli/` twice"},
		{"a package called none", readme(good + "Not Go packages: `cli/`.\n"), "is not a Go package, but it is one"},
		{"a stale directory", readme(good + "Not Go packages: `vm/`.\n"), "`vm/`, which does not exist"},
		{"no section", "# x\n", "no \"## Layout\" section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(checkLayout(tc.doc, pkgs, isDir), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("problems %q, want one containing %q", got, tc.want)
			}
		})
	}
}

// pictureLine is one line of docs/architecture.md's import picture:
// "pkg → a, b, c", or "pkg" alone for a package that imports nothing of
// ours, with an optional "(…)" remark at the end.
var pictureLine = regexp.MustCompile(`^(\S+)(?:\s+→\s+([^(]+?))?\s*(?:\(.*\))?$`)

// parsePicture reads the ```imports block of the architecture page: each
// package and what it may import; main is the root package ("").
func parsePicture(doc string) (map[string][]string, error) {
	_, block, ok := strings.Cut(doc, "\n```imports\n")
	if !ok {
		return nil, fmt.Errorf("no ```imports block")
	}
	block, _, ok = strings.Cut(block, "\n```")
	if !ok {
		return nil, fmt.Errorf("the ```imports block does not end")
	}
	out := map[string][]string{}
	for i, line := range strings.Split(block, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := pictureLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			return nil, fmt.Errorf("line %d of the picture, %q: not \"pkg → a, b\"", i+1, line)
		}
		pkg := m[1]
		if pkg == "main" {
			pkg = ""
		}
		if _, dup := out[pkg]; dup {
			return nil, fmt.Errorf("line %d of the picture: %s twice", i+1, m[1])
		}
		var deps []string
		if m[2] != "" {
			for _, d := range strings.Split(m[2], ",") {
				deps = append(deps, strings.TrimSpace(d))
			}
		}
		out[pkg] = deps
	}
	return out, nil
}

// checkPicture compares the picture's arrows with TestLayering's rules,
// both ways.
func checkPicture(picture map[string][]string, allowed map[string][]string) []string {
	name := func(p string) string {
		if p == "" {
			return "main"
		}
		return p
	}
	var problems []string
	for pkg, ours := range allowed {
		drawn, ok := picture[pkg]
		if !ok {
			problems = append(problems, fmt.Sprintf("the picture has no line for %s (its rule: %s → %s)", name(pkg), name(pkg), strings.Join(ours, ", ")))
			continue
		}
		want, got := slices.Clone(ours), slices.Clone(drawn)
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(want, got) {
			problems = append(problems, fmt.Sprintf("the picture draws %s → %s; TestLayering's rule allows %s", name(pkg), strings.Join(got, ", "), strings.Join(want, ", ")))
		}
	}
	for pkg := range picture {
		if _, ok := allowed[pkg]; !ok {
			problems = append(problems, fmt.Sprintf("the picture draws %s, which has no layering rule", name(pkg)))
		}
	}
	sort.Strings(problems)
	return problems
}

// TestArchitecturePicture: the import picture of docs/architecture.md is
// TestLayering's rules, arrow for arrow.
func TestArchitecturePicture(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	picture, err := parsePicture(string(doc))
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	allowed := map[string][]string{}
	for pkg, r := range rules {
		allowed[pkg] = r.ours
	}
	for _, p := range checkPicture(picture, allowed) {
		t.Errorf("docs/architecture.md: %s", p)
	}
}

func TestPictureChecker(t *testing.T) {
	allowed := map[string][]string{"": {"cli"}, "cli": {"runtime", "spec"}, "runtime": {"spec"}, "spec": nil}
	doc := func(lines string) string { return "# A\n\n```imports\n" + lines + "```\n" }
	good := "main → cli\ncli → spec, runtime\nruntime → spec\nspec (imports nothing of ours)\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"good", doc(good), ""},
		{"an arrow missing", doc("main → cli\ncli → runtime\nruntime → spec\nspec\n"), "draws cli → runtime; TestLayering's rule allows runtime, spec"},
		{"an arrow too many", doc("main → cli\ncli → spec, runtime\nruntime → spec, cli\nspec\n"), "draws runtime → cli, spec"},
		{"a package missing", doc("main → cli\ncli → spec, runtime\nruntime → spec\n"), "no line for spec"},
		{"a package without a rule", doc(good + "gone → spec\n"), "draws gone, which has no layering rule"},
		{"a line it cannot read", doc(good + "a -> b\n"), "not \"pkg → a, b\""},
		{"twice", doc(good + "spec\n"), "spec twice"},
		{"no picture", "# A\n", "no ```imports block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var problems []string
			picture, err := parsePicture(tc.doc)
			if err != nil {
				problems = []string{err.Error()}
			} else {
				problems = checkPicture(picture, allowed)
			}
			got := strings.Join(problems, "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("problems %q, want one containing %q", got, tc.want)
			}
		})
	}
}
