package report

import "testing"

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain /path/to/x", "plain /path/to/x"},
		{"naïve ünïcode ✓", "naïve ünïcode ✓"},
		{"/dev/h\r\x1b[Ksandbox: posture=isolated", `/dev/h\r\x1b[Ksandbox: posture=isolated`},
		{"a\tb\nc", `a\tb\nc`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eexe.txt", `bidi \u202eexe.txt`},
		{"isolate \u2066x\u2069", `isolate \u2066x\u2069`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad \xff byte", `bad \xff byte`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := PrintableLines("one\x1b[2J\ntwo\r"); got != "one\\x1b[2J\ntwo\\r" {
		t.Errorf("PrintableLines kept the wrong breaks: %q", got)
	}
}
