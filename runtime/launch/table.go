package launch

import (
	"fmt"
	"strings"
)

// RulesMarkdown is the rule table as docs/security-levels.md shows it (a
// test keeps the two the same).
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("| rule | where | what it demands | if broken | remedy |\n|---|---|---|---|---|\n")
	for _, r := range Rules {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.ID, r.Scope, escapeCell(r.Demands), exitOf(r.Kind), escapeCell(r.Remedy))
	}
	return b.String()
}

// RulesText is the rule table for a terminal: one rule a paragraph.
func RulesText() string {
	var b strings.Builder
	for _, r := range Rules {
		fmt.Fprintf(&b, "%s  [%s, %s]\n  %s\n  remedy: %s\n", r.ID, r.Scope, exitOf(r.Kind), r.Demands, r.Remedy)
	}
	return b.String()
}

func exitOf(k Kind) string {
	switch k {
	case KindFloor:
		return "exit 126"
	case KindInput:
		return "exit 1"
	}
	return "exit 125"
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
