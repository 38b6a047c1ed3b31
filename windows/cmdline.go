package windows

import "strings"

// quoteArg quotes one argument so that CommandLineToArgvW, and the C
// runtime's argv parsing every Windows program uses, read it back
// unchanged: wrapped in quotes when it has a space, tab or quote (or is
// empty), backslashes doubled only where they precede a quote. (The
// process gets one string; a wrong quoting would hand it other arguments
// than the spec's.)
func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\v\"") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, 2*slashes+1))
			b.WriteByte('"')
			slashes = 0
			continue
		default:
			b.WriteString(strings.Repeat(`\`, slashes))
			slashes = 0
			b.WriteByte(c)
			continue
		}
	}
	b.WriteString(strings.Repeat(`\`, 2*slashes))
	b.WriteByte('"')
	return b.String()
}

// quoteProgram quotes the first argument, which the C runtime reads by
// other rules: up to the first space or tab outside quotes, backslashes
// literal. It cannot hold a quote (no Windows file name can either);
// the translator refuses one.
func quoteProgram(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t") {
		return s
	}
	return `"` + s + `"`
}

// composeCommandLine joins args as CreateProcess wants them.
func composeCommandLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if i == 0 {
			out[i] = quoteProgram(a)
		} else {
			out[i] = quoteArg(a)
		}
	}
	return strings.Join(out, " ")
}
