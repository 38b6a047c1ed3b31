package spec

import (
	"strings"
	"testing"
)

func TestCheckKeys(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"clean", `{"ociVersion":"1.0.2","process":{"noNewPrivileges":true,"args":["sh"]},"annotations":{"a":"1","A":"2"}}`, ""},
		{"unknown keys are extensions", `{"ociVersion":"1.0.2","x-vendor":{"noNewPrivileges":1}}`, ""},
		{"duplicate top-level", `{"ociVersion":"1","ociVersion":"2"}`, "key ociVersion appears twice"},
		{"duplicate nested", `{"process":{"noNewPrivileges":true,"noNewPrivileges":false}}`, "key process.noNewPrivileges appears twice"},
		{"case variant", `{"process":{"NoNewPrivileges":false}}`, `key process.NoNewPrivileges is the spec's "noNewPrivileges"`},
		{"case variant in a list", `{"linux":{"maskedPaths":[],"MaskedPaths":["/x"]}}`, `key linux.MaskedPaths`},
		{"case variant in an array element", `{"mounts":[{"destination":"/a"},{"Destination":"/b"}]}`, `key mounts[1].Destination`},
		{"duplicate annotation", `{"annotations":{"dev.vetto.level":"strict","dev.vetto.level":"degraded"}}`, "annotations.dev.vetto.level appears twice"},
		{"embedded struct fields", `{"linux":{"seccomp":{"defaultAction":"SCMP_ACT_ALLOW","DefaultAction":"x"}}}`, "linux.seccomp.DefaultAction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKeys([]byte(tt.json))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
	if _, err := Parse([]byte(`{"ociVersion":"1.0.2","process":{"args":["sh"],"NoNewPrivileges":true}}`)); err == nil {
		t.Fatal("Parse accepted a case-variant key")
	}
	big := `{"ociVersion":"1.0.2","annotations":{"x":"` + strings.Repeat("a", MaxConfigSize) + `"}}`
	if _, err := Parse([]byte(big)); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("Parse of %d bytes: %v", len(big), err)
	}
}
