package launch

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the rule table in docs/security-levels.md")

const (
	tableDoc   = "../../docs/security-levels.md"
	tableBegin = "<!-- rules:begin (generated from runtime/launch.Rules; go test ./runtime/launch -update) -->\n"
	tableEnd   = "<!-- rules:end -->"
)

// The docs' rule table is the evaluator's: a rule added, renamed or
// reworded in code without the docs fails here.
func TestRuleTableInDocs(t *testing.T) {
	data, err := os.ReadFile(tableDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated rule table (markers %q … %q)", tableDoc, strings.TrimSpace(tableBegin), tableEnd)
	}
	got, want := doc[i+len(tableBegin):j], RulesMarkdown()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(tableDoc, []byte(doc[:i+len(tableBegin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s's rule table differs from runtime/launch.Rules; run go test ./runtime/launch -update", tableDoc)
}
