package darwin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sexp is one node of a parsed SBPL profile: a list, a symbol (or
// number), or a string literal.
type sexp struct {
	list   []sexp
	isList bool
	atom   string
	str    string
	isStr  bool
	regex  bool // #"..." literal
}

// parseSBPL is a small s-expression reader, enough for the SBPL that any
// profile could contain (lists, symbols, strings with escapes, #"regex"
// literals, ; comments). It is the tests' own reading of the text, apart
// from the renderer, so that the assertions judge what sandbox-exec
// would read, not what the translator meant to write.
func parseSBPL(text string) ([]sexp, error) {
	p := &sbplReader{s: text}
	var forms []sexp
	for {
		p.skip()
		if p.i >= len(p.s) {
			return forms, nil
		}
		f, err := p.read()
		if err != nil {
			return nil, err
		}
		forms = append(forms, f)
	}
}

type sbplReader struct {
	s string
	i int
}

func (p *sbplReader) skip() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ';':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *sbplReader) read() (sexp, error) {
	p.skip()
	if p.i >= len(p.s) {
		return sexp{}, fmt.Errorf("unexpected end of profile")
	}
	switch c := p.s[p.i]; {
	case c == '(':
		p.i++
		n := sexp{isList: true}
		for {
			p.skip()
			if p.i >= len(p.s) {
				return sexp{}, fmt.Errorf("unclosed list")
			}
			if p.s[p.i] == ')' {
				p.i++
				return n, nil
			}
			e, err := p.read()
			if err != nil {
				return sexp{}, err
			}
			n.list = append(n.list, e)
		}
	case c == ')':
		return sexp{}, fmt.Errorf("unexpected ) at %d", p.i)
	case c == '"' || c == '#' && p.i+1 < len(p.s) && p.s[p.i+1] == '"':
		regex := c == '#'
		if regex {
			p.i++
		}
		start := p.i
		p.i++
		for p.i < len(p.s) && p.s[p.i] != '"' {
			if p.s[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		if p.i >= len(p.s) {
			return sexp{}, fmt.Errorf("unterminated string at %d", start)
		}
		p.i++
		v, err := strconv.Unquote(p.s[start:p.i])
		if err != nil {
			return sexp{}, fmt.Errorf("string at %d: %w", start, err)
		}
		return sexp{str: v, isStr: true, regex: regex}, nil
	default:
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(" \t\r\n();\"", rune(p.s[p.i])) {
			p.i++
		}
		return sexp{atom: p.s[start:p.i]}, nil
	}
}

func (n sexp) head() string {
	if n.isList && len(n.list) > 0 && !n.list[0].isList {
		return n.list[0].atom
	}
	return ""
}

// sbplRule is a top-level (allow|deny OPS [FILTER]) form as read.
type sbplRule struct {
	allow  bool
	ops    []string
	filter string // literal, subpath, target, or ""
	param  string // for literal/subpath
	target string
}

var paramName = regexp.MustCompile(`^P[0-9]+$`)

// checkProfile asserts the rules every generated profile must obey and
// returns its rules: (version 1) then (deny default) first; no string
// literal anywhere but a parameter name as the sole argument of (param);
// every path filter is (literal|subpath (param NAME)) of a declared
// parameter; nothing allowed by default, no network, no Mach service; and
// the masks are denies after the last allow.
func checkProfile(t *testing.T, text string, p *Plan) []sbplRule {
	t.Helper()
	rules, bad := profileViolations(text, p)
	for _, b := range bad {
		t.Error(b)
	}
	if len(bad) > 0 {
		t.FailNow()
	}
	return rules
}

// profileViolations is checkProfile's judgement: the rules read, and
// every violation found.
func profileViolations(text string, p *Plan) ([]sbplRule, []string) {
	var bad []string
	errorf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	forms, err := parseSBPL(text)
	if err != nil {
		return nil, []string{fmt.Sprintf("profile does not parse: %v", err)}
	}
	if len(forms) < 2 || forms[0].head() != "version" || len(forms[0].list) != 2 || forms[0].list[1].atom != "1" {
		return nil, []string{"profile must start with (version 1)"}
	}
	if forms[1].head() != "deny" || len(forms[1].list) != 2 || forms[1].list[1].atom != "default" {
		return nil, []string{"second form must be (deny default)"}
	}
	declared := map[string]bool{}
	for _, pa := range p.Params {
		declared[pa.Name] = true
	}
	var walk func(n sexp, parent string, siblings int)
	walk = func(n sexp, parent string, siblings int) {
		switch {
		case n.regex:
			errorf("regex literal %q in the profile: paths must come in as parameters", n.str)
		case n.isStr:
			if parent != "param" || siblings != 2 || !paramName.MatchString(n.str) || !declared[n.str] {
				errorf("string literal %q outside (param \"Pn\") of a declared parameter (parent %q)", n.str, parent)
			}
		case n.isList:
			for _, c := range n.list {
				walk(c, n.head(), len(n.list))
			}
		}
	}
	for _, f := range forms {
		walk(f, "", 0)
	}

	var rules []sbplRule
	for i, f := range forms[2:] {
		h := f.head()
		if h != "allow" && h != "deny" {
			errorf("form %d: want allow or deny, got %q", i+2, h)
			continue
		}
		r := sbplRule{allow: h == "allow"}
		for _, e := range f.list[1:] {
			switch {
			case !e.isList:
				r.ops = append(r.ops, e.atom)
			case r.filter != "":
				errorf("form %d: more than one filter", i+2)
			case e.head() == "target" && len(e.list) == 2:
				r.filter, r.target = "target", e.list[1].atom
			case (e.head() == "literal" || e.head() == "subpath") && len(e.list) == 2 && e.list[1].head() == "param" && len(e.list[1].list) == 2 && e.list[1].list[1].isStr:
				r.filter, r.param = e.head(), e.list[1].list[1].str
			default:
				errorf("form %d: filter %+v is not (literal|subpath (param NAME)) or (target …)", i+2, e)
			}
		}
		if len(r.ops) == 0 {
			errorf("form %d: no operation", i+2)
		}
		for _, op := range r.ops {
			if !r.allow {
				continue
			}
			switch {
			case op == "default":
				errorf("form %d: (allow default)", i+2)
			case strings.HasPrefix(op, "network"), strings.HasPrefix(op, "mach"), strings.HasPrefix(op, "iokit"), strings.HasPrefix(op, "ipc"):
				errorf("form %d: allows %s", i+2, op)
			case strings.HasPrefix(op, "file-") || op == "process-exec":
				if r.param == "" {
					errorf("form %d: allows %s without a path parameter", i+2, op)
				}
			case op == "signal" || op == "process-info*":
				if r.filter != "target" {
					errorf("form %d: allows %s beyond a target", i+2, op)
				}
			case op == "process-fork" || op == "sysctl-read":
			default:
				errorf("form %d: allows unexpected operation %s", i+2, op)
			}
		}
		rules = append(rules, r)
	}

	lastAllow := -1
	for i, r := range rules {
		if r.allow {
			lastAllow = i
		}
	}
	byValue := map[string][]string{}
	for _, pa := range p.Params {
		byValue[pa.Value] = append(byValue[pa.Value], pa.Name)
	}
	for _, m := range p.Masked {
		last := -1
		for i, r := range rules {
			if !r.allow && r.filter == "subpath" && containsStr(byValue[m], r.param) && containsStr(r.ops, "file-read*") && containsStr(r.ops, "file-write*") {
				last = i
			}
		}
		switch {
		case last < 0:
			errorf("mask %q has no (deny file-read* file-write* (subpath …))", m)
		case last < lastAllow:
			errorf("mask %q is denied last at rule %d, before the last allow (%d): a later allow could reopen it", m, last, lastAllow)
		}
	}
	return rules, bad
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sbplAllows evaluates parsed rules as the kernel would (last match wins,
// deny by default), with the plan's parameter values: the tests' own
// evaluator, independent of the translator's.
func sbplAllows(rules []sbplRule, p *Plan, op, path string) bool {
	values := map[string]string{}
	for _, pa := range p.Params {
		values[pa.Name] = pa.Value
	}
	allowed := false
	for _, r := range rules {
		if r.filter == "target" {
			continue
		}
		match := false
		for _, o := range r.ops {
			if o == op || strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*")) {
				match = true
			}
		}
		if !match {
			continue
		}
		if r.filter != "" {
			v := values[r.param]
			if r.filter == "literal" && path != v || r.filter == "subpath" && !(path == v || v == "/" || strings.HasPrefix(path, v+"/")) {
				continue
			}
		}
		allowed = r.allow
	}
	return allowed
}

func TestParseSBPL(t *testing.T) {
	tests := []struct {
		name, text string
		ok         bool
	}{
		{"nested", `(version 1) (allow file-read* (subpath (param "P0"))) ; c`, true},
		{"escaped string", `(x "a\"b\\c\n")`, true},
		{"regex", `(allow file-read* (regex #"^/a"))`, true},
		{"unclosed", `(version 1`, false},
		{"stray close", `)`, false},
		{"unterminated string", `(x "abc)`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSBPL(tt.text)
			if (err == nil) != tt.ok {
				t.Fatalf("parseSBPL(%q) error = %v, want ok=%v", tt.text, err, tt.ok)
			}
		})
	}
	forms, _ := parseSBPL(`(x "a\"b\\c\n")`)
	if got := forms[0].list[1].str; got != "a\"b\\c\n" {
		t.Fatalf("string = %q", got)
	}
}

// The reader's checks must be able to fail: a profile with a path in
// its text, a mask denied before an allow, or an allow of the network is
// rejected.
func TestCheckProfileCatches(t *testing.T) {
	p := &Plan{Params: []Param{{Name: "P0", Value: "/a"}, {Name: "P1", Value: "/a/secret"}}, Masked: []string{"/a/secret"}}
	bad := []struct{ name, text string }{
		{"path literal", "(version 1)\n(deny default)\n(allow file-read* (subpath \"/etc\"))\n"},
		{"mask before allow", "(version 1)\n(deny default)\n(deny file-read* file-write* (subpath (param \"P1\")))\n(allow file-read* (subpath (param \"P0\")))\n"},
		{"network", "(version 1)\n(deny default)\n(allow network-outbound)\n(deny file-read* file-write* (subpath (param \"P1\")))\n"},
		{"no deny default", "(version 1)\n(allow file-read* (subpath (param \"P0\")))\n"},
		{"undeclared param", "(version 1)\n(deny default)\n(allow file-read* (subpath (param \"P7\")))\n(deny file-read* file-write* (subpath (param \"P1\")))\n"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, bad := profileViolations(tt.text, p); len(bad) == 0 {
				t.Fatalf("profileViolations accepted:\n%s", tt.text)
			}
		})
	}
}
