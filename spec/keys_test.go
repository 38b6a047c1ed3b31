package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
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
		{"duplicate through an escape", `{"ociVersion":"1","\u006fciVersion":"2"}`, "key ociVersion appears twice"},
		{"case variant through an escape", `{"process":{"\u004eoNewPrivileges":true}}`, `key process.NoNewPrivileges is the spec's "noNewPrivileges"`},
		{"duplicate in a large object", `{"annotations":{` + manyKeys(40) + `,"k7":"again"}}`, "key annotations.k7 appears twice"},
		{"large object, no duplicate", `{"annotations":{` + manyKeys(40) + `}}`, ""},
		{"duplicate deep in arrays", `{"linux":{"seccomp":{"syscalls":[{"names":["a"]},{"names":["b"],"action":"x","action":"y"}]}}}`, "key linux.seccomp.syscalls[1].action appears twice"},
		{"unknown extension object keeps its keys", `{"x-vendor":{"a":1,"a":2}}`, "key x-vendor.a appears twice"},
		{"nested arrays", `{"process":{"args":[]},"x":[[{"k":1}],[{"k":1,"k":2}]]}`, "key x[1][0].k appears twice"},
		{"escaped quote in a value", `{"process":{"args":["a\"b","c\\"]},"ociVersion":"1"}`, ""},
		{"missing colon", `{"ociVersion" "1"}`, "invalid config.json"},
		{"trailing comma", `{"ociVersion":"1",}`, "invalid config.json"},
		{"unterminated string", `{"ociVersion":"1`, "invalid config.json"},
		{"control character in a string", "{\"ociVersion\":\"a\nb\"}", "invalid config.json"},
		{"missing comma in an array", `{"process":{"args":["a" "b"]}}`, "invalid config.json"},
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

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\"k%d\":\"v\"", i)
	}
	return b.String()
}

// FuzzCheckKeys holds the byte walker to what encoding/json reads: for
// valid JSON, CheckKeys refuses exactly what the token-by-token walk it
// replaced (referenceCheckKeys) refused, with the same words, and Parse
// accepts the same documents; malformed JSON Parse always refuses.
func FuzzCheckKeys(f *testing.F) {
	for _, seed := range []string{
		`{"ociVersion":"1.0.2","process":{"args":["sh"],"env":["A=1"]},"annotations":{"a":"1"}}`,
		`{"process":{"NoNewPrivileges":true}}`,
		`{"a":1,"a":2}`,
		`{"\u0061":1,"a":2}`,
		`{"linux":{"seccomp":{"syscalls":[{"names":["read"],"action":"SCMP_ACT_ALLOW"}]}}}`,
		`[1, 2.5e3, -0, true, false, null, "x"]`,
		`{"ociVersion":tru}`,
		`{"a":{"b":[{"c":"\ud800"}]}}`,
		"{\"\xff\":1,\"\xfe\":2}",
		` {} `, ``, `{`, `"`, `{"a":}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := CheckKeys(data)
		want := referenceCheckKeys(data)
		_, gotErr := Parse(data)
		_, wantErr := parseWith(data, want)
		if !json.Valid(data) {
			// Malformed: which error comes first may differ (the walk
			// leaves scalars to the decoder), not that Parse refuses.
			if gotErr == nil {
				t.Fatalf("Parse(%q) accepted malformed JSON; the token walk said %v", data, wantErr)
			}
			return
		}
		if keyRefusal(got) != keyRefusal(want) {
			t.Fatalf("CheckKeys(%q) = %v; the token walk said %v", data, got, want)
		}
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("Parse(%q): %v; with the token walk: %v", data, gotErr, wantErr)
		}
	})
}

// keyRefusal is the key a refusal of CheckKeys is about ("" for none, or
// for malformed JSON).
func keyRefusal(err error) string {
	if err == nil || strings.HasPrefix(err.Error(), "invalid config.json") {
		return ""
	}
	return err.Error()
}

// parseWith is Parse whose key check said checkErr (and without its
// bounds on size).
func parseWith(data []byte, checkErr error) (*specs.Spec, error) {
	if checkErr != nil {
		return nil, checkErr
	}
	var s specs.Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if len(bytes.Trim(data[dec.InputOffset():], jsonSpace)) > 0 {
		return nil, errors.New("trailing data")
	}
	return &s, nil
}

// referenceCheckKeys is the key check as encoding/json's tokens see it
// (what CheckKeys did before it walked bytes): slow, and plainly right.
func referenceCheckKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return referenceWalk(dec, reflect.TypeOf(specs.Spec{}), "")
}

func referenceWalk(dec *json.Decoder, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil
		}
		return fmt.Errorf("invalid config.json: %w", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := referenceWalk(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case '{':
		fields := fieldsOf(t)
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("invalid config.json: %w", err)
			}
			key, _ := tok.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			if seen[key] {
				return fmt.Errorf("config.json: key %s appears twice; readers disagree on which one counts: keep one", at)
			}
			seen[key] = true
			var child reflect.Type
			switch {
			case fields != nil:
				if f, ok := fields.exact[key]; ok {
					child = f.typ
				} else if f, ok := fields.folded[strings.ToLower(key)]; ok {
					return fmt.Errorf("config.json: key %s is the spec's %q but for case; Go's decoder would take it for that field, a reviewer would not: spell it %q", at, f.name, f.name)
				}
			case t != nil && t.Kind() == reflect.Map:
				child = t.Elem()
			}
			if err := referenceWalk(dec, child, at); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("invalid config.json: %w", err)
	}
	return nil
}
