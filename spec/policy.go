package spec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// A policy file is small TOML (docs/policy.md; its JSON Schema is
// config.schema.json at the repository root, and the two are kept in step by
// schema_test.go):
//
//	extends = "default"                 # default | strict | audit | permissive
//	[filesystem]
//	allow_read  = ["$HOME/.gitconfig"]  # read-only binds
//	allow_write = ["$PROJECT/out"]      # read-write binds
//	deny        = ["$PROJECT/secrets"]  # masked
//	[environment]
//	pass_through = ["GOFLAGS", "NPM_CONFIG_*"]
//	[network]
//	mode  = "off"                       # off | allowlist | strict
//	allow = ["proxy.golang.org"]
//	[limits]
//	memory = "2GiB"
//	pids   = 512
//	cpu    = 1.5
//	[security]
//	level          = "standard"         # strict | standard | degraded
//	allow_degraded = ["landlock"]
//	[[credentials]]                     # credentials.go
//	host      = "api.example.test"
//	header    = "Authorization"
//	from_file = "$HOME/.config/vetto/token"

// Kinds of policy errors, for errors.Is. Every PolicyError wraps one.
var (
	// ErrPolicy is wrapped by every error ParsePolicy and Compile return
	// for a bad policy, so callers can tell bad input from a failure.
	ErrPolicy       = errors.New("invalid policy")
	ErrSyntax       = errors.New("TOML syntax error")
	ErrUnknownKey   = errors.New("unknown key")
	ErrWrongType    = errors.New("wrong type")
	ErrBadValue     = errors.New("invalid value")
	ErrRelativePath = errors.New("not an absolute path")
	ErrPathEscapes  = errors.New("path escapes its root")
	ErrRemovesDeny  = errors.New("would remove a denied path")
	// ErrUnsafe marks a policy or an invocation that would hand the
	// sandbox the host or let it change its own next run (a writable /,
	// a whole $HOME, a project of /): the CLI refuses it as the sandbox
	// not established (125), not as a typo.
	ErrUnsafe = errors.New("unsafe for the host")
)

// Pos says where in a policy a value was written.
type Pos struct {
	File string
	Line int    // 1-based; 0 when no line is known
	Key  string // dotted key, with [i] for an array element
}

func (p Pos) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		b.WriteString(":" + strconv.Itoa(p.Line))
	}
	if p.Key != "" {
		b.WriteString(": " + p.Key)
	}
	return b.String()
}

// PolicyError is one problem in a policy, at the file, line and key where
// it was written.
type PolicyError struct {
	Pos
	Err error
}

func (e *PolicyError) Error() string { return e.Pos.String() + ": " + e.Err.Error() }

// Unwrap returns ErrPolicy and the cause, so errors.Is finds both the
// general kind and the specific one.
func (e *PolicyError) Unwrap() []error { return []error{ErrPolicy, e.Err} }

// PolicyErrors is every problem found, in file order: one edit of the file
// should be able to fix them all (as runtime-tools' validator reports all).
type PolicyErrors []*PolicyError

func (es PolicyErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap lets errors.Is and errors.As see every problem.
func (es PolicyErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func (es PolicyErrors) sorted() PolicyErrors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].File != es[j].File {
			return es[i].File < es[j].File
		}
		return es[i].Line < es[j].Line
	})
	return es
}

// Setting is one value of a policy and where it was written. Set is false
// when the policy does not say, and the profile's value applies.
type Setting[T any] struct {
	Value T
	Set   bool
	At    Pos
}

// Policy is a parsed policy file: what the user wrote and where. It says
// nothing about a host yet; Compile combines it with a profile and Inputs.
type Policy struct {
	File    string
	Extends Setting[string]

	AllowRead  []Setting[string]
	AllowWrite []Setting[string]
	Deny       []Setting[string]

	PassThrough []Setting[string]

	NetworkMode  Setting[string]
	NetworkAllow []Setting[string]

	Memory Setting[int64] // bytes
	Pids   Setting[int64]
	CPU    Setting[float64]

	Level         Setting[string]
	AllowDegraded []Setting[string]

	// Credentials are the [[credentials]] tables: headers the relay adds
	// for one host each, from a host file or the runtime's environment.
	Credentials []Credential
}

// Enumerations shared with config.schema.json.
var (
	networkModes     = []string{"off", "allowlist", "strict"}
	securityLevels   = []string{"degraded", "standard", "strict"} // weakest first
	degradedFeatures = []string{"landlock", "network", "limits", "cgroup-kill"}
)

// Patterns shared with config.schema.json.
var (
	envNamePattern  = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)
	hostPattern     = lazyRegexp(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$`)
	memoryPattern   = lazyRegexp(`^([0-9]+(?:\.[0-9]+)?)([KMGT]i?B?|[kmgt]|B)?$`)
	policyVariables = []string{"$PROJECT", "$HOME", "$TMP"}
)

// policySchema is every key a policy may have and the TOML type of its
// value; anything else is ErrUnknownKey.
var policySchema = map[string]string{
	"extends":                  "string",
	"filesystem":               "table",
	"filesystem.allow_read":    "array",
	"filesystem.allow_write":   "array",
	"filesystem.deny":          "array",
	"environment":              "table",
	"environment.pass_through": "array",
	"network":                  "table",
	"network.mode":             "string",
	"network.allow":            "array",
	"limits":                   "table",
	"limits.memory":            "string",
	"limits.pids":              "integer",
	"limits.cpu":               "number",
	"security":                 "table",
	"security.level":           "string",
	"security.allow_degraded":  "array",
	// An array of tables; credentials() checks the keys inside.
	"credentials": "tables",
}

// ParsePolicy parses a policy file. file names it in errors (it is not
// opened: spec never reads files). The error, if any, is a PolicyErrors
// listing every problem with its file, line and key; each wraps ErrPolicy
// and one of ErrSyntax, ErrUnknownKey, ErrWrongType, ErrBadValue,
// ErrRelativePath or ErrPathEscapes.
func ParsePolicy(data []byte, file string) (*Policy, error) {
	p, errs := ParsePolicyPartial(data, file)
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// ParsePolicyPartial is ParsePolicy for `policy check`, which reports
// every problem in one pass: with the problems it also returns what did
// parse (each bad value left unset), so that the compiler can judge the
// rest. The policy is nil only when the file is not TOML at all.
func ParsePolicyPartial(data []byte, file string) (*Policy, PolicyErrors) {
	var raw map[string]any
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// The library counts a newline it stopped at as the next
			// line; the byte offset says where the problem is.
			line := pe.Position.Line
			if start := pe.Position.Start; start > 0 && start <= len(data) {
				line = 1 + bytes.Count(data[:start], []byte("\n"))
			}
			return nil, PolicyErrors{{Pos{File: file, Line: line, Key: pe.LastKey}, fmt.Errorf("%w: %s", ErrSyntax, pe.Message)}}
		}
		return nil, PolicyErrors{{Pos{File: file}, fmt.Errorf("%w: %w", ErrSyntax, err)}}
	}
	r := &policyReader{file: file, lines: keyLines(data), raw: raw}
	r.checkKeys(md.Keys())
	p := &Policy{File: file}
	p.Extends = r.enum("extends", profileNames())
	p.AllowRead = r.paths("filesystem.allow_read")
	p.AllowWrite = r.paths("filesystem.allow_write")
	p.Deny = r.paths("filesystem.deny")
	p.PassThrough = r.strings("environment.pass_through", func(v string) error {
		if !envNamePattern().MatchString(v) {
			return fmt.Errorf("%w: %q is not a variable name (letters, digits and _, optionally ending in * for a prefix)", ErrBadValue, v)
		}
		return nil
	})
	p.NetworkMode = r.enum("network.mode", networkModes)
	p.NetworkAllow = r.strings("network.allow", func(v string) error {
		if !hostPattern().MatchString(v) {
			return fmt.Errorf("%w: %q is not a host name: write example.com, *.example.com or host:port, without a scheme or path", ErrBadValue, v)
		}
		if err := CheckNetRule(v); err != nil {
			return fmt.Errorf("%w: %w", ErrBadValue, err)
		}
		return nil
	})
	if m, listed := p.NetworkMode, r.listed("network.allow"); m.Set && m.Value != "off" && !listed {
		r.fail(m.At, fmt.Errorf("%w: mode %q needs at least one network.allow entry: the relay allows only what is listed", ErrBadValue, m.Value))
	}
	if p.NetworkMode.Set && p.NetworkMode.Value == "off" && len(p.NetworkAllow) > 0 {
		r.fail(p.NetworkAllow[0].At, fmt.Errorf("%w: network.mode is \"off\", so nothing can be allowed: set mode = \"allowlist\" or remove allow", ErrBadValue))
	}
	if p.NetworkMode.Value == "strict" {
		for _, a := range p.NetworkAllow {
			if strings.HasPrefix(a.Value, "*.") || !strings.Contains(a.Value, ":") {
				r.fail(a.At, fmt.Errorf("%w: %q: mode \"strict\" allows only exact host:port entries", ErrBadValue, a.Value))
			}
		}
	}
	p.Credentials = r.credentials()
	p.Memory = r.memory("limits.memory")
	p.Pids = r.integer("limits.pids", 1)
	if p.Pids.Set && p.Pids.Value >= NoPidsBound {
		// More tasks than the kernel can have: no limit, which strict
		// would refuse at create.
		r.fail(p.Pids.At, fmt.Errorf("%w: %d: must be below %d, the kernel's most tasks", ErrBadValue, p.Pids.Value, NoPidsBound))
		p.Pids = Setting[int64]{}
	}
	p.CPU = r.cpu("limits.cpu")
	p.Level = r.enum("security.level", securityLevels)
	p.AllowDegraded = r.strings("security.allow_degraded", func(v string) error {
		if !contains(degradedFeatures, v) {
			return fmt.Errorf("%w: %q is not a degradable feature (one of %s)", ErrBadValue, v, strings.Join(degradedFeatures, ", "))
		}
		return nil
	})
	return p, r.errs.sorted()
}

// Merge is es and more, in file order.
func (es PolicyErrors) Merge(more PolicyErrors) PolicyErrors {
	return append(append(PolicyErrors{}, es...), more...).sorted()
}

// ProfilePolicy is the policy of a bare profile: extends name, adds nothing.
func ProfilePolicy(name string) (*Policy, error) {
	if _, ok := profiles[name]; !ok {
		return nil, fmt.Errorf("%w: unknown profile %q (one of %s)", ErrPolicy, name, strings.Join(profileNames(), ", "))
	}
	return &Policy{File: "profile " + name, Extends: Setting[string]{Value: name, Set: true}}, nil
}

// policyReader walks a decoded document, collecting every problem.
type policyReader struct {
	file  string
	lines map[string]int
	raw   map[string]any
	errs  PolicyErrors
	bad   map[string]bool // keys already reported; their values are not read again
}

func (r *policyReader) at(key string) Pos {
	line := r.lines[key]
	if line == 0 {
		// An array element on the array's line, a key of an inline
		// table on the table's line.
		if i := strings.LastIndexAny(key, ".["); i > 0 {
			return Pos{File: r.file, Line: r.at(key[:i]).Line, Key: key}
		}
	}
	return Pos{File: r.file, Line: line, Key: key}
}

func (r *policyReader) fail(at Pos, err error) {
	r.errs = append(r.errs, &PolicyError{at, err})
}

// checkKeys reports keys the schema does not know, once each (not their
// children), with a suggestion when one is close.
func (r *policyReader) checkKeys(keys []toml.Key) {
	r.bad = map[string]bool{}
	for _, k := range keys {
		name := strings.Join(k, ".")
		parent := strings.Join(k[:len(k)-1], ".")
		if len(k) > 1 && policySchema[parent] != "table" {
			continue // inside an unknown key or a value; reported there
		}
		if _, ok := policySchema[name]; ok {
			continue
		}
		r.bad[name] = true
		msg := fmt.Sprintf("%q is not a policy key", k[len(k)-1])
		if s := suggest(k[len(k)-1], siblings(parent)); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			msg += fmt.Sprintf(" (known here: %s)", strings.Join(siblings(parent), ", "))
		}
		r.fail(r.at(name), fmt.Errorf("%w: %s", ErrUnknownKey, msg))
	}
}

// siblings are the known keys directly inside table parent ("" = top).
func siblings(parent string) []string {
	var out []string
	for k := range policySchema {
		i := strings.LastIndexByte(k, '.')
		if (i < 0 && parent == "") || (i > 0 && k[:i] == parent) {
			out = append(out, k[i+1:])
		}
	}
	sort.Strings(out)
	return out
}

// lookup returns the value at a dotted key, and whether it is there. A
// table on the way that is not a table is reported as a wrong type once.
func (r *policyReader) lookup(key string) (any, bool) {
	var cur any = r.raw
	parts := strings.Split(key, ".")
	for i, part := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			parent := strings.Join(parts[:i], ".")
			if !r.bad[parent] {
				r.bad[parent] = true
				r.fail(r.at(parent), fmt.Errorf("%w: want a table ([%s]), got %s", ErrWrongType, parent, tomlType(cur)))
			}
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func (r *policyReader) str(key string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		r.fail(r.at(key), fmt.Errorf("%w: want a string, got %s", ErrWrongType, tomlType(v)))
	}
	return s, ok
}

func (r *policyReader) enum(key string, allowed []string) Setting[string] {
	v, ok := r.lookup(key)
	if !ok {
		return Setting[string]{}
	}
	s, ok := r.str(key, v)
	if !ok {
		return Setting[string]{}
	}
	if !contains(allowed, s) {
		r.fail(r.at(key), fmt.Errorf("%w: %q: want one of %s", ErrBadValue, s, strings.Join(allowed, ", ")))
		return Setting[string]{}
	}
	return Setting[string]{Value: s, Set: true, At: r.at(key)}
}

// strings reads an array of unique strings, each checked by check.
// listed reports whether key is a non-empty array, valid or not.
func (r *policyReader) listed(key string) bool {
	v, _ := r.lookup(key)
	list, ok := v.([]any)
	return ok && len(list) > 0
}

func (r *policyReader) strings(key string, check func(string) error) []Setting[string] {
	v, ok := r.lookup(key)
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		r.fail(r.at(key), fmt.Errorf("%w: want an array of strings, got %s", ErrWrongType, tomlType(v)))
		return nil
	}
	var out []Setting[string]
	seen := map[string]bool{}
	for i, item := range list {
		ekey := fmt.Sprintf("%s[%d]", key, i)
		s, ok := r.str(ekey, item)
		if !ok {
			continue
		}
		if err := check(s); err != nil {
			r.fail(r.at(ekey), err)
			continue
		}
		if seen[s] {
			r.fail(r.at(ekey), fmt.Errorf("%w: %q is listed twice", ErrBadValue, s))
			continue
		}
		seen[s] = true
		out = append(out, Setting[string]{Value: s, Set: true, At: r.at(ekey)})
	}
	return out
}

func (r *policyReader) paths(key string) []Setting[string] {
	return r.strings(key, checkPathSyntax)
}

// checkPathSyntax is the part of a path's checks that needs no host: it is
// absolute or starts with a known variable, and has no ".." (which could
// climb out of its root without any symlink).
func checkPathSyntax(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty path", ErrRelativePath)
	case strings.HasPrefix(p, "$"):
		name, _, _ := strings.Cut(p, "/")
		if !contains(policyVariables, name) {
			return fmt.Errorf("%w: %q: unknown variable %s (known: %s)", ErrBadValue, p, name, strings.Join(policyVariables, ", "))
		}
	case strings.HasPrefix(p, "~"):
		return fmt.Errorf("%w: %q: write $HOME instead of ~", ErrRelativePath, p)
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w: %q: start it with /, $PROJECT, $HOME or $TMP", ErrRelativePath, p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("%w: %q: \"..\" is not allowed in policy paths", ErrPathEscapes, p)
		}
	}
	return nil
}

func (r *policyReader) memory(key string) Setting[int64] {
	v, ok := r.lookup(key)
	if !ok {
		return Setting[int64]{}
	}
	s, ok := r.str(key, v)
	if !ok {
		return Setting[int64]{}
	}
	n, err := ParseMemory(s)
	if err != nil {
		r.fail(r.at(key), err)
		return Setting[int64]{}
	}
	return Setting[int64]{Value: n, Set: true, At: r.at(key)}
}

// ParseMemory reads a size: a number of bytes with an optional unit. Units
// with "i" are binary (KiB = 1024), the others decimal (K, KB, k = 1000),
// as Kubernetes and the SI do.
func ParseMemory(s string) (int64, error) {
	m := memoryPattern().FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%w: %q is not a size: write e.g. 512MiB, 2GiB or 2G", ErrBadValue, s)
	}
	num, _ := strconv.ParseFloat(m[1], 64)
	unit := strings.TrimSuffix(m[2], "B")
	mult := 1.0
	if unit != "" {
		base := 1000.0
		if strings.HasSuffix(unit, "i") {
			base = 1024
		}
		exp := strings.IndexByte("KMGT", strings.ToUpper(unit[:1])[0]) + 1
		mult = math.Pow(base, float64(exp))
	}
	bytes := num * mult
	if bytes < 1<<20 || bytes > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w: %q: memory must be between 1MiB and 4EiB", ErrBadValue, s)
	}
	return int64(bytes), nil
}

func (r *policyReader) integer(key string, min int64) Setting[int64] {
	v, ok := r.lookup(key)
	if !ok {
		return Setting[int64]{}
	}
	n, ok := v.(int64)
	if !ok {
		r.fail(r.at(key), fmt.Errorf("%w: want an integer, got %s", ErrWrongType, tomlType(v)))
		return Setting[int64]{}
	}
	if n < min {
		r.fail(r.at(key), fmt.Errorf("%w: %d: must be at least %d", ErrBadValue, n, min))
		return Setting[int64]{}
	}
	return Setting[int64]{Value: n, Set: true, At: r.at(key)}
}

// minCPU is the smallest CPU share the CFS quota can express: the kernel
// refuses a quota below 1ms per 100ms period.
const minCPU = 0.01

func (r *policyReader) cpu(key string) Setting[float64] {
	v, ok := r.lookup(key)
	if !ok {
		return Setting[float64]{}
	}
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		r.fail(r.at(key), fmt.Errorf("%w: want a number of CPUs (e.g. 1.5), got %s", ErrWrongType, tomlType(v)))
		return Setting[float64]{}
	}
	if math.IsNaN(f) || f < minCPU || f > 4096 {
		r.fail(r.at(key), fmt.Errorf("%w: %v: cpu must be between %v and 4096", ErrBadValue, f, minCPU))
		return Setting[float64]{}
	}
	return Setting[float64]{Value: f, Set: true, At: r.at(key)}
}

// tomlType names a decoded TOML value's type the way the TOML spec does.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	default:
		return "a date/time"
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns the candidate within edit distance 2 of s, if exactly
// one is closest: "filesytem" → "filesystem".
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lazyRegexp compiles expr on first use: most commands parse no policy
// and no credential rule, and compiling every pattern at start-up was a
// tenth of a millisecond of each run.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
