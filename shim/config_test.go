package shim

import (
	"reflect"
	"testing"
)

func TestConfigRoundTrip(t *testing.T) {
	for _, c := range []Config{
		{},
		{Ruleset: `{"ruleset":{"handledAccessFS":1}}`},
		{Ruleset: `{"x":"-- --ruleset"}`, CanaryFD: 5},
		{CanaryFD: 4, CanaryConnected: true},
	} {
		got, err := Decode(c.Encode())
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Fatalf("round trip of %+v: %+v, %v", c, got, err)
		}
		if got.Empty() != (c.Ruleset == "" && c.CanaryFD == 0) {
			t.Fatalf("Empty(%+v) = %v", c, got.Empty())
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, bad := range []string{
		``,
		`{`,
		`{"ruleset":"r","extra":1}`,
		`{"canaryFD":1}`,
		`{"canaryFD":-3}`,
		`{"canaryConnected":true}`,
		`{"ruleset":"r"} {"ruleset":"s"}`,
		`{"ruleset":"r"}}`,
		`{"ruleset":"r"}]`,
		"{\"ruleset\":\"r\"}\f",
		`{"rlimits":[]}`,
	} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
}

func TestEnvMatches(t *testing.T) {
	cases := []struct {
		name      string
		spec, got []string
		want      bool
	}{
		{"as the spec, HOME added", []string{"PATH=/bin", "A=1"}, []string{"PATH=/bin", "A=1", "HOME=/"}, true},
		{"the spec's HOME", []string{"PATH=/bin", "HOME=/x"}, []string{"PATH=/bin", "HOME=/x"}, true},
		{"duplicates: last value, last place", []string{"A=1", "B=2", "A=3"}, []string{"B=2", "A=3", "HOME=/"}, true},
		{"an empty HOME is replaced", []string{"HOME=", "A=1"}, []string{"A=1", "HOME=/root"}, true},
		{"a variable added", []string{"A=1"}, []string{"A=1", "TOKEN=x", "HOME=/"}, false},
		{"a variable changed", []string{"A=1"}, []string{"A=2", "HOME=/"}, false},
		{"a variable dropped", []string{"A=1", "B=2"}, []string{"A=1", "HOME=/"}, false},
		{"no HOME where the init adds one", []string{"A=1"}, []string{"A=1"}, false},
		{"HOME changed", []string{"HOME=/x"}, []string{"HOME=/y"}, false},
		{"reordered", []string{"A=1", "B=2"}, []string{"B=2", "A=1", "HOME=/"}, false},
	}
	for _, c := range cases {
		env, home := InitEnv(c.spec)
		if got := EnvMatches(c.got, EnvDigest(env), home); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
