package spec

import (
	"bytes"
	"fmt"
	"strings"
)

// keyLines maps every key of a TOML document to the line it is written on:
// dotted keys ("filesystem.deny"), array elements ("filesystem.deny[2]")
// and keys of inline tables. The TOML library reports positions only for
// syntax errors, and an error that names a line is what lets a user fix a
// policy without searching, so we find them ourselves.
//
// It runs only on documents the TOML library has already accepted, so it
// needs to follow valid TOML only; on anything unexpected it moves to the
// next line rather than loop.
func keyLines(src []byte) map[string]int {
	s := &lineScanner{src: src, line: 1, out: map[string]int{}, tables: map[string]int{}}
	s.document()
	return s.out
}

type lineScanner struct {
	src  []byte
	pos  int
	line int
	out  map[string]int
	// tables counts the elements of each array of tables seen so far.
	tables map[string]int
}

func (s *lineScanner) eof() bool { return s.pos >= len(s.src) }

func (s *lineScanner) peek() byte {
	if s.eof() {
		return 0
	}
	return s.src[s.pos]
}

func (s *lineScanner) advance() {
	if s.eof() {
		return
	}
	if s.src[s.pos] == '\n' {
		s.line++
	}
	s.pos++
}

func (s *lineScanner) hasPrefix(p string) bool {
	return bytes.HasPrefix(s.src[s.pos:], []byte(p))
}

func (s *lineScanner) record(key string, line int) {
	if _, ok := s.out[key]; !ok {
		s.out[key] = line
	}
}

// recordPath records key and each of its dotted prefixes.
func (s *lineScanner) recordPath(parts []string, line int) {
	for i := 1; i <= len(parts); i++ {
		s.record(strings.Join(parts[:i], "."), line)
	}
}

func (s *lineScanner) skipSpace() {
	for c := s.peek(); c == ' ' || c == '\t'; c = s.peek() {
		s.advance()
	}
}

// skipBlank skips spaces, newlines and comments.
func (s *lineScanner) skipBlank() {
	for !s.eof() {
		switch s.peek() {
		case ' ', '\t', '\r', '\n':
			s.advance()
		case '#':
			s.skipLine()
		default:
			return
		}
	}
}

// skipLine moves to the start of the next line.
func (s *lineScanner) skipLine() {
	for !s.eof() && s.peek() != '\n' {
		s.advance()
	}
	s.advance()
}

func (s *lineScanner) document() {
	var table []string
	for {
		s.skipBlank()
		if s.eof() {
			return
		}
		start := s.pos
		line := s.line
		if s.peek() == '[' {
			s.advance()
			array := s.peek() == '['
			if array {
				s.advance()
			}
			table = s.key()
			s.recordPath(table, line)
			if array && len(table) > 0 {
				// [[credentials]]: each table is an element, and its
				// keys are recorded as credentials[i].host.
				name := strings.Join(table, ".")
				i := s.tables[name]
				s.tables[name]++
				last := len(table) - 1
				table = append(append([]string{}, table[:last]...), fmt.Sprintf("%s[%d]", table[last], i))
				s.record(strings.Join(table, "."), line)
			}
			s.skipLine()
			continue
		}
		k := s.key()
		s.skipSpace()
		if len(k) == 0 || s.peek() != '=' {
			if s.pos == start {
				s.skipLine()
			}
			continue
		}
		s.advance()
		full := append(append([]string{}, table...), k...)
		s.recordPath(full, line)
		s.value(strings.Join(full, "."))
	}
}

// key reads a possibly dotted, possibly quoted key.
func (s *lineScanner) key() []string {
	var parts []string
	for {
		s.skipSpace()
		switch c := s.peek(); {
		case c == '"' || c == '\'':
			parts = append(parts, s.quoted())
		case isBareKeyChar(c):
			start := s.pos
			for isBareKeyChar(s.peek()) {
				s.advance()
			}
			parts = append(parts, string(s.src[start:s.pos]))
		default:
			return parts
		}
		s.skipSpace()
		if s.peek() != '.' {
			return parts
		}
		s.advance()
	}
}

func isBareKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// quoted reads a one-line string and returns its content (escapes are
// kept as written: the result only names keys).
func (s *lineScanner) quoted() string {
	q := s.peek()
	s.advance()
	start := s.pos
	for !s.eof() && s.peek() != q && s.peek() != '\n' {
		if q == '"' && s.peek() == '\\' {
			s.advance()
		}
		s.advance()
	}
	out := string(s.src[start:s.pos])
	s.advance()
	return out
}

// value skips one value, recording the lines of array elements and of
// inline-table keys under key.
func (s *lineScanner) value(key string) {
	s.skipSpace()
	switch {
	case s.hasPrefix(`"""`) || s.hasPrefix(`'''`):
		delim := string(s.src[s.pos : s.pos+3])
		for i := 0; i < 3; i++ {
			s.advance()
		}
		for !s.eof() && !s.hasPrefix(delim) {
			if delim == `"""` && s.peek() == '\\' {
				s.advance()
			}
			s.advance()
		}
		// A closing delimiter may be followed by up to two more quotes.
		for s.peek() == delim[0] {
			s.advance()
		}
	case s.peek() == '"' || s.peek() == '\'':
		s.quoted()
	case s.peek() == '[':
		s.advance()
		for i := 0; ; i++ {
			s.skipBlank()
			if s.eof() || s.peek() == ']' {
				s.advance()
				return
			}
			elem := fmt.Sprintf("%s[%d]", key, i)
			s.record(elem, s.line)
			before := s.pos
			s.value(elem)
			s.skipBlank()
			switch s.peek() {
			case ',':
				s.advance()
			case ']':
				s.advance()
				return
			default:
				if s.pos == before {
					s.skipLine()
				}
				return
			}
		}
	case s.peek() == '{':
		s.advance()
		for {
			s.skipSpace()
			if s.eof() || s.peek() == '}' {
				s.advance()
				return
			}
			line := s.line
			k := s.key()
			s.skipSpace()
			if len(k) == 0 || s.peek() != '=' {
				s.skipLine()
				return
			}
			s.advance()
			sub := key + "." + strings.Join(k, ".")
			s.record(sub, line)
			s.value(sub)
			s.skipSpace()
			if s.peek() == ',' {
				s.advance()
				continue
			}
			if s.peek() == '}' {
				s.advance()
			}
			return
		}
	default:
		for c := s.peek(); !s.eof() && c != ',' && c != ']' && c != '}' && c != '\n' && c != '#'; c = s.peek() {
			s.advance()
		}
	}
}
