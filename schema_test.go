package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
		{"pids zero", `{"limits":{"pids":0}}`},
		{"memory without number", `{"limits":{"memory":"lots"}}`},
		{"unknown level", `{"security":{"level":"paranoid"}}`},
		{"unknown degraded feature", `{"security":{"allow_degraded":["everything"]}}`},
		{"env name with space", `{"environment":{"pass_through":["A B"]}}`},
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
		})
	}
}
