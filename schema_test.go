package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vetto-dev/vetto-runtime/spec"
)

func compilePolicySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile("config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("config.schema.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("config.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("config.schema.json")
	if err != nil {
		t.Fatalf("compile config.schema.json: %v", err)
	}
	return s
}

// Every example policy under testdata/policy validates.
func TestPolicySchemaAcceptsExamples(t *testing.T) {
	s := compilePolicySchema(t)
	files, _ := filepath.Glob("testdata/policy/*.json")
	if len(files) == 0 {
		t.Fatal("no example policies in testdata/policy")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		})
	}
}

func TestPolicySchemaRejects(t *testing.T) {
	s := compilePolicySchema(t)
	tests := []struct{ name, doc string }{
		{"unknown top-level key", `{"filesytem":{}}`},
		{"unknown profile", `{"extends":"yolo"}`},
		{"relative path", `{"filesystem":{"allow_write":["src"]}}`},
		{"dot-dot escape", `{"filesystem":{"allow_read":["$PROJECT/../secrets"]}}`},
		{"unknown variable", `{"filesystem":{"deny":["$USERPROFILE/x"]}}`},
		{"unknown network mode", `{"network":{"mode":"open"}}`},
		{"allow with mode off", `{"network":{"mode":"off","allow":["example.com"]}}`},
		{"url instead of host", `{"network":{"mode":"allowlist","allow":["https://example.com"]}}`},
		{"allowlist without allow", `{"network":{"mode":"allowlist"}}`},
		{"strict with an empty allow", `{"network":{"mode":"strict","allow":[]}}`},
		{"pids zero", `{"limits":{"pids":0}}`},
		{"memory without number", `{"limits":{"memory":"lots"}}`},
		{"unknown level", `{"security":{"level":"paranoid"}}`},
		{"unknown degraded feature", `{"security":{"allow_degraded":["everything"]}}`},
		{"env name with space", `{"environment":{"pass_through":["A B"]}}`},
		{"credential without a source", `{"network":{"mode":"allowlist","allow":["api.example.test"]},"credentials":[{"host":"api.example.test","header":"X-Key"}]}`},
		{"credential with two sources", `{"network":{"mode":"allowlist","allow":["api.example.test"]},"credentials":[{"host":"api.example.test","header":"X-Key","from_env":"K","from_file":"/k"}]}`},
		{"credential with a value", `{"network":{"mode":"allowlist","allow":["api.example.test"]},"credentials":[{"host":"api.example.test","header":"X-Key","from_env":"K","value":"hunter2"}]}`},
		{"credential for a wildcard", `{"network":{"mode":"allowlist","allow":["*.example.test"]},"credentials":[{"host":"*.example.test","header":"X-Key","from_env":"K"}]}`},
		{"credential header Host", `{"network":{"mode":"allowlist","allow":["api.example.test"]},"credentials":[{"host":"api.example.test","header":"host","from_env":"K"}]}`},
		{"credential file relative", `{"network":{"mode":"allowlist","allow":["api.example.test"]},"credentials":[{"host":"api.example.test","header":"X-Key","from_file":"token"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tt.doc), &v); err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(v); err == nil {
				t.Fatalf("%s validated, want a schema error", tt.doc)
			}
			// The parser refuses the same policy, written as TOML.
			if _, err := spec.ParsePolicy(jsonToTOML(t, []byte(tt.doc)), "p.toml"); err == nil {
				t.Fatalf("%s: the schema refuses it but spec.ParsePolicy accepts it", tt.doc)
			}
		})
	}
}

// Every TOML example validates against the schema (as JSON, the form the
// schema describes) and parses; every JSON example parses as TOML. Parser
// and schema agree on the examples both ways.
func TestPolicyExamplesParse(t *testing.T) {
	s := compilePolicySchema(t)
	tomls, _ := filepath.Glob("testdata/policy/*.toml")
	jsons, _ := filepath.Glob("testdata/policy/*.json")
	if len(tomls) == 0 || len(jsons) == 0 {
		t.Fatal("no example policies in testdata/policy")
	}
	for _, f := range tomls {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := spec.ParsePolicy(data, f); err != nil {
				t.Fatalf("ParsePolicy: %v", err)
			}
			var doc map[string]any
			if _, err := toml.Decode(string(data), &doc); err != nil {
				t.Fatal(err)
			}
			asJSON, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(asJSON))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		})
	}
	for _, f := range jsons {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := spec.ParsePolicy(jsonToTOML(t, data), f); err != nil {
				t.Fatalf("ParsePolicy: %v", err)
			}
		})
	}
}

// The schema's enumerations are the parser's: each value parses, and
// extends lists exactly the built-in profiles.
func TestPolicySchemaEnums(t *testing.T) {
	data, err := os.ReadFile("config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Enum       []string `json:"enum"`
			Properties map[string]struct {
				Enum  []string `json:"enum"`
				Items struct {
					Enum []string `json:"enum"`
				} `json:"items"`
			} `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(sorted(schema.Properties["extends"].Enum), ","), strings.Join(spec.ProfileNames(), ","); got != want {
		t.Errorf("schema extends enum %s, profiles %s", got, want)
	}
	docs := map[string][]string{
		"[network]\nmode = %q\n":              schema.Properties["network"].Properties["mode"].Enum,
		"[security]\nlevel = %q\n":            schema.Properties["security"].Properties["level"].Enum,
		"[security]\nallow_degraded = [%q]\n": schema.Properties["security"].Properties["allow_degraded"].Items.Enum,
		"extends = %q\n":                      schema.Properties["extends"].Enum,
	}
	for format, values := range docs {
		if len(values) == 0 {
			t.Fatalf("no enum for %q in the schema", format)
		}
		for _, v := range values {
			doc := strings.ReplaceAll(format, "%q", `"`+v+`"`)
			if strings.HasPrefix(format, "[network]") && v != "off" {
				doc += "allow = [\"example.com:443\"]\n" // a relay mode needs a rule
			}
			if _, err := spec.ParsePolicy([]byte(doc), "p.toml"); err != nil {
				t.Errorf("schema value %q: %v", v, err)
			}
		}
	}
}

func sorted(list []string) []string {
	out := append([]string{}, list...)
	sort.Strings(out)
	return out
}

// jsonToTOML re-encodes a JSON policy as TOML, keeping whole numbers
// integers (JSON has one number type, TOML two).
func jsonToTOML(t *testing.T, data []byte) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(integers(doc)); err != nil {
		t.Fatalf("encode %s as TOML: %v", data, err)
	}
	return buf.Bytes()
}

func integers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = integers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = integers(e)
		}
	}
	return v
}
