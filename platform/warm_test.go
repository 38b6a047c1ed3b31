package platform

import "testing"

func TestWantsCodecs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"vetto-runtime", "run", "-b", "b", "id"}, true},
		{[]string{"vetto-runtime", "--root", "/run/x", "--log-format", "json", "create", "--bundle", "b", "id"}, true},
		{[]string{"vetto-runtime", "start", "id"}, true},
		{[]string{"vetto-runtime", "exec", "id", "true"}, true},
		{[]string{"vetto-runtime", "delete", "--force", "id"}, true},
		{[]string{"vetto-runtime", "state", "id"}, false},
		{[]string{"vetto-runtime", "list"}, false},
		{[]string{"vetto-runtime", "--version"}, false},
		{[]string{"vetto-runtime", "spec", "--", "run"}, false},
		{[]string{"vetto-runtime"}, false},
		{nil, false},
		// A flag's value that is a command's name: a harmless warm-up.
		{[]string{"vetto-runtime", "--root", "run", "state", "id"}, true},
	} {
		if got := wantsCodecs(tc.args); got != tc.want {
			t.Errorf("wantsCodecs(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
