package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Printable is s with everything a terminal would act on rather than
// show written out as an escape (\r, \x1b, \u202e): C0 and C1 control
// characters, DEL, the Unicode line and paragraph separators, the
// bidirectional overrides and isolates, and bytes that are not UTF-8.
//
// Much of what vetto prints for a person is the bundle's or the
// workload's own text: a mount destination in the posture, a path in a
// refusal, a file name the workload chose in a teardown warning. Printed
// raw, a carriage return and an erase-line sequence in a mount destination
// rewrote the launch line on the operator's terminal to read
// "posture=isolated", and a tab moved a verdict into another column. Every
// line for a person goes through this; JSON output is the encoder's.
func Printable(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// PrintableLines is Printable for text that is meant to span lines
// (an error that joins several): each line escaped, the line breaks kept.
func PrintableLines(s string) string {
	if !needsEscape(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	return strings.Join(lines, "\n")
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			return !plainUTF8(s)
		}
	}
	return false
}

// plainUTF8: valid UTF-8 with no rune Printable escapes.
func plainUTF8(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if r < 0x20 || r == 0x7f || unsafeRune(r) {
			return false
		}
	}
	return true
}

// unsafeRune: C1 controls, the line and paragraph separators, and the
// bidirectional formatting characters that reorder what follows them.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
