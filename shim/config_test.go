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
		`{"ruleset":"r"} {"ruleset":"s"}`,
		`{"rlimits":[]}`,
	} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
}
