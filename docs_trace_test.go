package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// traceDoc is the design trace: one row per item of the design, with the
// code that builds it and the tests that fail without it.
const traceDoc = "docs/design-trace.md"

// traceHeader is the header every table of the trace has.
const traceHeader = "| item | status | code | test | notes |"

// traceRow is one item of the trace.
type traceRow struct {
	line                int
	item, status, notes string
	code, tests         []string
}

var (
	backticked  = regexp.MustCompile("`([^`]+)`")
	traceCounts = regexp.MustCompile(`(?m)^Rows by status: built (\d+), not applicable (\d+), not built (\d+) \(total (\d+)\)\.$`)
	openIssue   = regexp.MustCompile(`#(17|18|19)\b`)
	testName    = regexp.MustCompile(`^Test[A-Z0-9_][A-Za-z0-9_]*$`)
)

// parseTrace reads the rows of every table with the trace's header; a
// table with another header, or a row with another number of cells, is
// an error (a row the test cannot read is a row it cannot keep honest).
func parseTrace(doc string) ([]traceRow, error) {
	var rows []traceRow
	inTable := false
	for i, line := range strings.Split(doc, "\n") {
		n := i + 1
		switch {
		case line == traceHeader:
			inTable = true
			continue
		case !strings.HasPrefix(line, "|"):
			inTable = false
			continue
		case !inTable:
			return nil, fmt.Errorf("line %d: a table whose header is not %q", n, traceHeader)
		case strings.HasPrefix(line, "|---"):
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
		if len(cells) != 5 {
			return nil, fmt.Errorf("line %d: %d cells, want 5 (a | inside a cell?)", n, len(cells))
		}
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		r := traceRow{line: n, item: cells[0], status: cells[1], notes: cells[4]}
		for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
			r.code = append(r.code, m[1])
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
			r.tests = append(r.tests, m[1])
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// repoTests is every `func TestX(` in the repository's test files, outside
// third_party (runc's tests are not ours to cite).
func repoTests(t *testing.T) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == "third_party" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(data, -1) {
			out[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkTrace returns every problem of the trace against the repository:
// tests that do not exist, code that does not, rows with neither code and
// test nor a reason, counts that are not the rows'.
func checkTrace(doc string, tests map[string]bool, exists func(path, symbol string) error) []string {
	rows, err := parseTrace(doc)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	bad := func(r traceRow, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d (%s): %s", traceDoc, r.line, r.item, fmt.Sprintf(format, args...)))
	}
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.status]++
		if r.item == "" {
			bad(r, "no item")
		}
		switch r.status {
		case "built":
			if len(r.code) == 0 || len(r.tests) == 0 {
				bad(r, "built, but names no code or no test")
			}
		case "not applicable":
			if r.notes == "" {
				bad(r, "not applicable without saying why")
			}
		case "not built":
			if !openIssue.MatchString(r.notes) {
				bad(r, "not built without naming its open issue (#17, #18, #19)")
			}
		default:
			bad(r, "status %q is not built, not applicable or not built", r.status)
		}
		for _, name := range r.tests {
			if !testName.MatchString(name) {
				bad(r, "%q in the test column is not a test function's name", name)
			} else if !tests[name] {
				bad(r, "test %s does not exist (no func %s( in a _test.go file)", name, name)
			}
		}
		for _, c := range r.code {
			path, symbol, _ := strings.Cut(c, "#")
			if err := exists(path, symbol); err != nil {
				bad(r, "code %s: %v", c, err)
			}
		}
	}
	m := traceCounts.FindStringSubmatch(doc)
	if m == nil {
		problems = append(problems, traceDoc+": no line \"Rows by status: built N, not applicable N, not built N (total N).\"")
	} else if want := fmt.Sprintf("%d %d %d %d", counts["built"], counts["not applicable"], counts["not built"], len(rows)); strings.Join(m[1:], " ") != want {
		problems = append(problems, fmt.Sprintf("%s: the counts say built, not applicable, not built, total = %s; the rows are %s", traceDoc, strings.Join(m[1:], " "), want))
	}
	// The repository stands on its own: the trace cites nothing outside it.
	for _, outside := range []string{"http://", "https://", "/work/", "../"} {
		if strings.Contains(doc, outside) {
			problems = append(problems, fmt.Sprintf("%s: cites something outside the repository (%q)", traceDoc, outside))
		}
	}
	return problems
}

// repoPath says whether path (repository-relative; a trailing / a
// directory) exists and, with symbol, whether the file mentions it.
func repoPath(path, symbol string) error {
	if path == "" || filepath.IsAbs(path) || strings.Contains(path, "..") {
		return fmt.Errorf("not a repository-relative path")
	}
	fi, err := os.Stat(filepath.FromSlash(strings.TrimSuffix(path, "/")))
	if err != nil {
		return fmt.Errorf("does not exist")
	}
	if strings.HasSuffix(path, "/") != fi.IsDir() {
		return fmt.Errorf("a directory is written with a trailing /, a file without")
	}
	if symbol == "" {
		return nil
	}
	if fi.IsDir() {
		return fmt.Errorf("a #symbol needs a file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !regexp.MustCompile(`\b` + regexp.QuoteMeta(symbol) + `\b`).Match(data) {
		return fmt.Errorf("the file does not mention %s", symbol)
	}
	return nil
}

// TestDesignTrace keeps docs/design-trace.md true to the tree.
func TestDesignTrace(t *testing.T) {
	data, err := os.ReadFile(traceDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkTrace(string(data), repoTests(t), repoPath) {
		t.Error(p)
	}
}

// The checker itself: a removed test, a missing path, a row without a
// reason and a wrong count are each caught.
func TestDesignTraceChecker(t *testing.T) {
	tests := map[string]bool{"TestA": true}
	exists := func(path, symbol string) error {
		if path != "a.go" || (symbol != "" && symbol != "F") {
			return fmt.Errorf("does not exist")
		}
		return nil
	}
	doc := func(counts, rows string) string {
		return "Rows by status: " + counts + ".\n\n" + traceHeader + "\n|---|---|---|---|---|\n" + rows
	}
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"good", doc("built 1, not applicable 1, not built 1 (total 3)",
			"| x | built | `a.go#F` | `TestA` | |\n| y | not applicable | | | no such thing |\n| z | not built | | | #19 |\n"), ""},
		{"a test removed", doc("built 1, not applicable 0, not built 0 (total 1)", "| x | built | `a.go` | `TestGone` | |\n"), "test TestGone does not exist"},
		{"a path missing", doc("built 1, not applicable 0, not built 0 (total 1)", "| x | built | `b.go` | `TestA` | |\n"), "code b.go"},
		{"a symbol missing", doc("built 1, not applicable 0, not built 0 (total 1)", "| x | built | `a.go#G` | `TestA` | |\n"), "code a.go#G"},
		{"built without a test", doc("built 1, not applicable 0, not built 0 (total 1)", "| x | built | `a.go` | | |\n"), "names no code or no test"},
		{"not applicable without a reason", doc("built 0, not applicable 1, not built 0 (total 1)", "| x | not applicable | | | |\n"), "without saying why"},
		{"not built without an issue", doc("built 0, not applicable 0, not built 1 (total 1)", "| x | not built | | | later |\n"), "open issue"},
		{"an unknown status", doc("built 0, not applicable 0, not built 0 (total 1)", "| x | partial | `a.go` | `TestA` | |\n"), "status \"partial\""},
		{"wrong counts", doc("built 2, not applicable 0, not built 0 (total 2)", "| x | built | `a.go` | `TestA` | |\n"), "the rows are 1 0 0 1"},
		{"no counts", traceHeader + "\n| x | built | `a.go` | `TestA` | |\n", "no line"},
		{"a link outside", doc("built 1, not applicable 0, not built 0 (total 1)", "| x | built | `a.go` | `TestA` | see https://example.invalid |\n"), "outside the repository"},
		{"a row it cannot read", doc("built 1, not applicable 0, not built 0 (total 1)", "| x | built | `a.go` | `TestA` |\n"), "4 cells"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(checkTrace(tc.doc, tests, exists), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("problems %q, want one containing %q", got, tc.want)
			}
		})
	}
}
