package relaywire

import (
	"errors"
	"reflect"
	"testing"
)

func TestReadyLine(t *testing.T) {
	for _, hosts := range [][]string{nil, {"api.example.com:443 Authorization", "b.example:443 X-Api-Key"}} {
		line, err := Ready(hosts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseReady(line)
		if err != nil || !reflect.DeepEqual(got, hosts) {
			t.Errorf("ParseReady(Ready(%q)) = %q, %v", hosts, got, err)
		}
	}
}

func TestParseReady(t *testing.T) {
	for _, tc := range []struct {
		line    string
		refused bool
		err     string
	}{
		{line: "refused: allow[0]: bad rule\n", refused: true, err: "the relay refused its settings: allow[0]: bad rule"},
		{line: "error: harden: landlock: not supported\n", err: "harden: landlock: not supported"},
		{line: "", err: "exited before it was ready"},
		{line: "ready {}", err: "ready line: json: cannot unmarshal object into Go value of type []string"},
		{line: "readyish", err: `unexpected answer "readyish"`},
	} {
		_, err := ParseReady(tc.line)
		if err == nil || err.Error() != tc.err || errors.Is(err, ErrRefused) != tc.refused {
			t.Errorf("ParseReady(%q) = %v, want %q (refused %v)", tc.line, err, tc.err, tc.refused)
		}
	}
}
