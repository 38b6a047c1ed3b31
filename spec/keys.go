package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// MaxConfigSize bounds config.json: it is read whole and parsed more than
// once, and no real spec comes near it (the largest seccomp profiles are
// tens of KiB).
const MaxConfigSize = 4 << 20

// CheckKeys refuses a config.json that two readers could read two ways:
// an object with the same key twice (jq and most reviewers take the
// first, Go's encoding/json the last), or a key that differs from the
// spec's field name only by case (Go matches it to the field; a reviewer
// reading "NoNewPrivileges" does not). Unknown keys are fine — the spec
// lets producers add their own. The error names the key's path.
func CheckKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkKeys(dec, reflect.TypeOf(specs.Spec{}), ""); err != nil {
		return err
	}
	return nil
}

func walkKeys(dec *json.Decoder, t reflect.Type, path string) error {
	for t != nil && (t.Kind() == reflect.Pointer) {
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
		return nil // a scalar
	}
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case '{':
		fields := jsonFields(t)
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
				if f, ok := fields[strings.ToLower(key)]; ok {
					if f.name != key {
						return fmt.Errorf("config.json: key %s is the spec's %q but for case; Go's decoder would take it for that field, a reviewer would not: spell it %q", at, f.name, f.name)
					}
					child = f.typ
				}
			case t != nil && t.Kind() == reflect.Map:
				child = t.Elem()
			}
			if err := walkKeys(dec, child, at); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return fmt.Errorf("invalid config.json: %w", err)
	}
	return nil
}

type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields maps each JSON field name of struct t, lower-cased, to the
// name and type; nil when t is not a struct.
func jsonFields(t reflect.Type) map[string]jsonField {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]jsonField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag := f.Tag.Get("json"); tag != "" {
			if tag == "-" {
				continue
			}
			if n, _, _ := strings.Cut(tag, ","); n != "" {
				name = n
			}
		}
		if f.Anonymous && f.Tag.Get("json") == "" {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		out[strings.ToLower(name)] = jsonField{name: name, typ: f.Type}
	}
	return out
}
