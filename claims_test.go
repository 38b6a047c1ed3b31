package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// unqualifiedClaim matches the claims the design forbids without a
// qualifier (design trace X7): vetto-runtime says which boundaries it
// established and verified, never that a sandbox is absolute.
var unqualifiedClaim = regexp.MustCompile(`(?i)\b(full|complete|total|perfect|absolute)(ly)?[ -]isolat|escape[ -]proof|unescapable|bullet[ -]?proof|100 ?% (secure|safe)|cannot (be )?escape`)

// qualifier on the same line makes a match a statement about the claim
// ("never 'full isolation'"), not the claim.
var qualifier = regexp.MustCompile(`(?i)\b(not|never|no|without|forbid|forbidden|refuse[sd]?)\b`)

// TestClaimsAreQualified reads what a user reads — README.md, docs/, and
// every string literal of the code outside tests and third_party/ (help
// texts, messages) — for an absolute claim about isolation.
func TestClaimsAreQualified(t *testing.T) {
	bad := claimsIn(t, ".")
	for _, b := range bad {
		t.Errorf("an unqualified claim: %s", b)
	}
}

// TestClaimsFinder proves the finder sees a claim in each place it reads.
func TestClaimsFinder(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "vetto gives full isolation.\nIt is never \"full isolation\".\n")
	write("docs/a.md", "Containers are completely isolated.\n")
	write("cmd.go", "package main\nvar usage = \"an escape-proof sandbox\"\n")
	write("cmd_test.go", "package main\nvar fine = \"full isolation\"\n")
	write("third_party/x/y.go", "package x\nvar fine = \"full isolation\"\n")
	if got := claimsIn(t, dir); len(got) != 3 {
		t.Errorf("found %d claims, want 3 (README line 1, docs/a.md, cmd.go): %q", len(got), got)
	}
}

func claimsIn(t *testing.T, root string) []string {
	t.Helper()
	var bad []string
	check := func(where, text string) {
		for i, line := range strings.Split(text, "\n") {
			if unqualifiedClaim.MatchString(line) && !qualifier.MatchString(line) {
				bad = append(bad, where+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch rel {
			case "third_party", ".git", "bin", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(p, ".md") && (rel == "README.md" || strings.HasPrefix(rel, "docs"+string(filepath.Separator))):
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			check(rel, string(data))
		case strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go"):
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						check(rel, s)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}
