package platform

import "testing"

func TestWantsCodecs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want warmth
	}{
		{[]string{"vetto-runtime", "run", "-b", "b", "id"}, codecsAndCanaries},
		{[]string{"vetto-runtime", "--root", "/run/x", "--log-format", "json", "create", "--bundle", "b", "id"}, codecsAndCanaries},
		{[]string{"vetto-runtime", "start", "id"}, codecsAndCanaries},
		{[]string{"vetto-runtime", "exec", "id", "true"}, codecs},
		{[]string{"vetto-runtime", "delete", "--force", "id"}, codecs},
		{[]string{"vetto-runtime", "verify", "id"}, codecs},
		{[]string{"vetto-runtime", "state", "id"}, noCodecs},
		{[]string{"vetto-runtime", "list"}, noCodecs},
		{[]string{"vetto-runtime", "--version"}, noCodecs},
		{[]string{"vetto-runtime", "spec", "--", "run"}, noCodecs},
		{[]string{"vetto-runtime"}, noCodecs},
		{nil, noCodecs},
		// A flag's value that is a command's name: a harmless warm-up.
		{[]string{"vetto-runtime", "--root", "run", "state", "id"}, codecsAndCanaries},
		// The first command's name decides, as the command line would.
		{[]string{"vetto-runtime", "exec", "id", "start"}, codecs},
	} {
		if got := wantsCodecs(tc.args); got != tc.want {
			t.Errorf("wantsCodecs(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
