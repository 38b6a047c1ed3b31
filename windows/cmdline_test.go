package windows

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseCommandLine is CommandLineToArgvW's reading of a command line,
// written from its documented rules (the tests' own, apart from the
// quoter): the first argument ends at the first space outside quotes and
// takes backslashes literally; after it, 2n backslashes before a quote
// are n and the quote toggles quoting, 2n+1 are n and a literal quote,
// other backslashes are literal, and "" inside quotes is a literal quote.
func parseCommandLine(s string) []string {
	var args []string
	i := 0
	// argv[0]
	var b strings.Builder
	inQ := false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			inQ = !inQ
			continue
		}
		if !inQ && (c == ' ' || c == '\t') {
			break
		}
		b.WriteByte(c)
	}
	args = append(args, b.String())
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return args
		}
		var a strings.Builder
		inQ := false
		for i < len(s) {
			c := s[i]
			switch {
			case c == '\\':
				n := 0
				for i < len(s) && s[i] == '\\' {
					n++
					i++
				}
				if i < len(s) && s[i] == '"' {
					a.WriteString(strings.Repeat(`\`, n/2))
					if n%2 == 1 {
						a.WriteByte('"')
						i++
					}
					continue
				}
				a.WriteString(strings.Repeat(`\`, n))
				continue
			case c == '"':
				if inQ && i+1 < len(s) && s[i+1] == '"' {
					a.WriteByte('"')
					i += 2
					continue
				}
				inQ = !inQ
				i++
				continue
			case !inQ && (c == ' ' || c == '\t'):
			default:
				a.WriteByte(c)
				i++
				continue
			}
			break
		}
		args = append(args, a.String())
	}
}

func TestQuoteArgRoundTrip(t *testing.T) {
	tests := [][]string{
		{`C:\Windows\System32\cmd.exe`, "/c", "echo", "hi"},
		{`C:\Program Files\app.exe`, "a b", "", `"`, `\`, `a\`, `a\\`, `a\"b`, `\\"`, "tab\tx", "new\nline"},
		{"go.exe", "-ldflags=-X main.v=1 -s", `C:\dir with space\`, "проект ü 日本"},
	}
	for _, args := range tests {
		line := composeCommandLine(args)
		if got := parseCommandLine(line); !slices.Equal(got, args) {
			t.Errorf("composeCommandLine(%q) = %s, parses back to %q", args, line, got)
		}
	}
}

// A hostile argument cannot become two, and nothing but the quoter's
// own quoting changes it.
func FuzzQuoteArg(f *testing.F) {
	for _, s := range []string{"", `a"b`, `\\\"`, "x y", `\`, "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return
		}
		args := []string{"prog.exe", s, "tail"}
		if got := parseCommandLine(composeCommandLine(args)); !slices.Equal(got, args) {
			t.Fatalf("%q round-trips to %q", s, got)
		}
	})
}

// The parser must be able to fail the round trip: a naive join loses an
// argument with a space.
func TestParseCommandLineCatchesNaiveJoin(t *testing.T) {
	args := []string{"prog.exe", "a b"}
	if got := parseCommandLine(strings.Join(args, " ")); slices.Equal(got, args) {
		t.Fatal("a naive join round-trips: the parser would not catch a quoting bug")
	}
}

// The program, read by its own rules: spaces quoted, backslashes kept.
func TestQuoteProgram(t *testing.T) {
	for _, p := range []string{`C:\Program Files\x.exe`, `C:\x.exe`, `C:\dir with space\`, `x`} {
		args := []string{p, "a"}
		if got := parseCommandLine(composeCommandLine(args)); !slices.Equal(got, args) {
			t.Errorf("%q parses back to %q", p, got)
		}
	}
}
