package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

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
//
// It walks the bytes once, with no tokens and no values built: a policy
// bundle's config.json is mostly its seccomp profile, hundreds of small
// objects, and encoding/json's Decoder.Token took longer over them than
// decoding the whole spec. Only the first value is walked (Parse refuses
// trailing data); malformed JSON is reported as encoding/json reports it.
func CheckKeys(data []byte) error {
	w := keyWalker{data: data}
	w.space()
	if w.i == len(data) {
		return nil
	}
	err := w.value(specType)
	if errors.Is(err, errMalformed) {
		return fmt.Errorf("invalid config.json: %w", malformed(data, w.i))
	}
	return err
}

var specType = reflect.TypeOf(specs.Spec{})

// errMalformed: the walk met what is not JSON; malformed says what.
var errMalformed = errors.New("malformed JSON")

// malformed is encoding/json's account of what is wrong with data, or,
// should it find nothing, where the walk stopped.
func malformed(data []byte, at int) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return fmt.Errorf("unexpected input at byte %d", at)
}

type keyWalker struct {
	data []byte
	i    int
	path []pathStep // where the walk is, formatted only for an error
}

// pathStep is one step of a key's path: an object key, or (index >= 0)
// an array element.
type pathStep struct {
	key   []byte
	index int
}

// at is the path of key in the current object, as the errors print it.
func (w *keyWalker) at(key string) string {
	var b strings.Builder
	for _, s := range w.path {
		if s.index >= 0 {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(s.key)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}

func (w *keyWalker) space() {
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// value walks one value whose Go type is t (nil: a part of the document
// the spec does not define, whose keys are anyone's).
func (w *keyWalker) value(t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	w.space()
	if w.i == len(w.data) {
		return errMalformed
	}
	switch w.data[w.i] {
	case '{':
		return w.object(t)
	case '[':
		return w.array(t)
	case '"':
		_, _, err := w.str()
		return err
	default:
		return w.scalar()
	}
}

func (w *keyWalker) array(t reflect.Type) error {
	w.i++ // [
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	w.space()
	if w.i < len(w.data) && w.data[w.i] == ']' {
		w.i++
		return nil
	}
	for n := 0; ; n++ {
		if more, err := w.member(pathStep{index: n}, elem, ']'); !more || err != nil {
			return err
		}
	}
}

// member walks one array element or object member's value, of type t,
// at step of the path, and the comma (more) or closing delimiter after.
func (w *keyWalker) member(step pathStep, t reflect.Type, closing byte) (more bool, err error) {
	w.path = append(w.path, step)
	err = w.value(t)
	w.path = w.path[:len(w.path)-1]
	if err != nil {
		return false, err
	}
	w.space()
	if w.i == len(w.data) {
		return false, errMalformed
	}
	switch w.data[w.i] {
	case ',':
		w.i++
		return true, nil
	case closing:
		w.i++
		return false, nil
	}
	return false, errMalformed
}

func (w *keyWalker) object(t reflect.Type) error {
	w.i++ // {
	fields := fieldsOf(t)
	var child reflect.Type
	if fields == nil && t != nil && t.Kind() == reflect.Map {
		child = t.Elem()
	}
	// The keys seen, as the decoder reads them; most objects have a few.
	var seen [][]byte
	var seenSet map[string]struct{}
	w.space()
	if w.i < len(w.data) && w.data[w.i] == '}' {
		w.i++
		return nil
	}
	for {
		w.space()
		if w.i == len(w.data) || w.data[w.i] != '"' {
			return errMalformed
		}
		raw, escaped, err := w.str()
		if err != nil {
			return err
		}
		key := raw
		if escaped {
			// Escapes and bytes that are not UTF-8: the key is what
			// encoding/json decodes them to.
			var s string
			if err := json.Unmarshal(w.data[w.i-len(raw)-2:w.i], &s); err != nil {
				return errMalformed
			}
			key = []byte(s)
		}
		if len(seen) < 16 {
			for _, k := range seen {
				if bytes.Equal(k, key) {
					return fmt.Errorf("config.json: key %s appears twice; readers disagree on which one counts: keep one", w.at(string(key)))
				}
			}
			seen = append(seen, key)
			if len(seen) == 16 {
				seenSet = make(map[string]struct{}, 32)
				for _, k := range seen {
					seenSet[string(k)] = struct{}{}
				}
			}
		} else {
			if _, dup := seenSet[string(key)]; dup {
				return fmt.Errorf("config.json: key %s appears twice; readers disagree on which one counts: keep one", w.at(string(key)))
			}
			seenSet[string(key)] = struct{}{}
		}
		typ := child
		if fields != nil {
			typ = nil
			if f, ok := fields.exact[string(key)]; ok {
				typ = f.typ
			} else if f, ok := fields.folded[strings.ToLower(string(key))]; ok {
				return fmt.Errorf("config.json: key %s is the spec's %q but for case; Go's decoder would take it for that field, a reviewer would not: spell it %q", w.at(string(key)), f.name, f.name)
			}
		}
		w.space()
		if w.i == len(w.data) || w.data[w.i] != ':' {
			return errMalformed
		}
		w.i++
		if more, err := w.member(pathStep{key: key, index: -1}, typ, '}'); !more || err != nil {
			return err
		}
	}
}

// str reads the string at w.i and returns its raw bytes between the
// quotes; escaped says they hold an escape or a byte that is not
// UTF-8, so they are not the string as decoded.
func (w *keyWalker) str() (raw []byte, escaped bool, err error) {
	w.i++ // "
	start := w.i
	for w.i < len(w.data) {
		c := w.data[w.i]
		switch {
		case c == '"':
			raw = w.data[start:w.i]
			w.i++
			if !escaped && !utf8.Valid(raw) {
				escaped = true
			}
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			w.i += 2
		case c < 0x20:
			return nil, false, errMalformed
		default:
			w.i++
		}
	}
	return nil, false, errMalformed
}

// scalar skips a number, true, false or null. It checks only that one is
// there: Parse's decoding, next, refuses a malformed one.
func (w *keyWalker) scalar() error {
	start := w.i
	for w.i < len(w.data) {
		switch c := w.data[w.i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c == '-', c == '+', c == '.', c == 'E':
			w.i++
			continue
		}
		break
	}
	if w.i == start {
		return errMalformed
	}
	return nil
}

// typeFields are a struct's JSON fields by name, and by lower-cased name
// (the names Go's decoder would also match).
type typeFields struct {
	exact, folded map[string]jsonField
}

type jsonField struct {
	name string
	typ  reflect.Type
}

var fieldCache sync.Map // reflect.Type -> *typeFields

// fieldsOf is t's JSON fields, built once per type; nil when t is not a
// struct.
func fieldsOf(t reflect.Type) *typeFields {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	if f, ok := fieldCache.Load(t); ok {
		return f.(*typeFields)
	}
	f := &typeFields{exact: map[string]jsonField{}, folded: map[string]jsonField{}}
	for _, jf := range jsonFields(t) {
		f.exact[jf.name] = jf
		f.folded[strings.ToLower(jf.name)] = jf
	}
	fieldCache.Store(t, f)
	return f
}

// jsonFields lists the JSON fields of struct t, those of embedded
// structs included.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
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
		if ft := f.Type; f.Anonymous && f.Tag.Get("json") == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				// Promoted, as encoding/json promotes them.
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		out = append(out, jsonField{name: name, typ: f.Type})
	}
	return out
}
