package darwin

import (
	"slices"
	"strconv"
	"strings"
)

// rule is one SBPL rule: (allow|deny OPS [FILTER]). A path filter is
// always (literal (param NAME)) or (subpath (param NAME)); the only other
// filter is (target self|same-sandbox) for process operations.
type rule struct {
	allow   bool
	ops     []string
	filter  string // "literal", "subpath" or ""
	param   string
	target  string
	comment string
}

// render writes the profile. Nothing in it comes from the spec but its
// shape: operations and filters are constants, paths are parameter names,
// comments name fields. That is what makes it safe to build from a hostile
// spec: a path with a quote, a parenthesis or a newline cannot change the
// profile, because it is not in it (one well-known tool interpolated paths
// into the text).
func render(rules []rule) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	for _, r := range rules {
		if r.comment != "" {
			b.WriteString("; " + r.comment + "\n")
		}
		if r.allow {
			b.WriteString("(allow ")
		} else {
			b.WriteString("(deny ")
		}
		b.WriteString(strings.Join(r.ops, " "))
		switch {
		case r.filter != "":
			b.WriteString(" (" + r.filter + " (param " + strconv.Quote(r.param) + "))")
		case r.target != "":
			b.WriteString(" (target " + r.target + ")")
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// evaluate answers whether the rules allow op on path p, given the
// parameters' values: the last rule that matches decides, and none
// matching is the (deny default). It is the kernel's rule for the subset
// of SBPL render writes, used to derive guards and by the tests.
func evaluate(rules []rule, values map[string]string, op, p string) bool {
	allowed := false
	for _, r := range rules {
		if r.target != "" || !opsMatch(r.ops, op) {
			continue
		}
		if r.filter != "" {
			v, ok := values[r.param]
			if !ok || !pathMatch(r.filter, v, p) {
				continue
			}
		}
		allowed = r.allow
	}
	return allowed
}

func opsMatch(ops []string, op string) bool {
	for _, o := range ops {
		if o == op || strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*")) {
			return true
		}
	}
	return false
}

func pathMatch(filter, v, p string) bool {
	switch filter {
	case "literal":
		return p == v
	case "subpath":
		return p == v || v == "/" || strings.HasPrefix(p, v+"/")
	}
	return false
}

// SandboxArgs is sandbox-exec's argv after its name, up to and including
// "--": the profile, then each parameter as -D NAME=VALUE. sandbox-exec
// splits at the first "=", so a value may hold any byte but NUL (refused
// by the translator).
func (p *Plan) SandboxArgs() []string {
	args := []string{"-p", p.Profile}
	for _, pa := range p.Params {
		args = append(args, "-D", pa.Name+"="+pa.Value)
	}
	return append(args, "--")
}

// Resolved returns a copy of p whose paths went through resolve: the
// launcher resolves symlinks, since Seatbelt matches the resolved path of
// each access (/etc is /private/etc on macOS, and a rule on /etc would
// match nothing). The profile does not change, only the values.
func (p *Plan) Resolved(resolve func(string) string) *Plan {
	q := *p
	q.Params = slices.Clone(p.Params)
	for i := range q.Params {
		q.Params[i].Value = resolve(q.Params[i].Value)
	}
	each := func(list []string) []string {
		out := make([]string, len(list))
		for i, v := range list {
			out[i] = resolve(v)
		}
		return out
	}
	q.ReadRoots, q.WriteRoots, q.Hidden, q.Masked = each(p.ReadRoots), each(p.WriteRoots), each(p.Hidden), each(p.Masked)
	return &q
}
