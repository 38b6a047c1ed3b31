package spec

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteExplanation prints a plan for a person (`policy explain`): what
// the sandbox reads, writes, cannot see, and the rest of what the policy
// decided. It is here, beside Plan, for the same reason the launch
// evaluator prints its own rules: the words follow what the compiler
// records.
func WriteExplanation(w io.Writer, name string, pl *Plan) error {
	prof, _ := LookupProfile(pl.Profile)
	fmt.Fprintf(w, "%s: extends %s: %s\n", name, pl.Profile, prof.Summary)
	root := "the host's system directories, read-only (host-root bundle)"
	if pl.Rootfs != "" {
		root = pl.Rootfs + ", read-only"
	}
	fmt.Fprintf(w, "level %s · root filesystem: %s\n", pl.Level, root)

	groups := []struct {
		title string
		match func(PathRule) bool
	}{
		{"Readable (read-only)", func(r PathRule) bool { return r.Access == AccessRead }},
		{"Writable", func(r PathRule) bool { return r.Access == AccessWrite }},
		{"Masked (unreadable, even by root in the sandbox)", func(r PathRule) bool {
			return r.Access == AccessMasked && r.Unseen == Seen
		}},
		{"Not mounted", func(r PathRule) bool { return r.Access == AccessNone }},
	}
	for _, g := range groups {
		var rows []PathRule
		for _, r := range pl.Paths {
			if g.match(r) {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g.title)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, r := range rows {
			path := r.Path
			if r.Source != "" && r.Source != r.Path {
				path += " ← " + r.Source
			}
			if r.Note != "" {
				fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", path, r.Origin, r.Note)
			} else {
				fmt.Fprintf(tw, "  %s\t%s\n", path, r.Origin)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var hidden, absent, creatable []string
	for _, r := range pl.Paths {
		if r.Access != AccessMasked {
			continue
		}
		switch r.Unseen {
		case UnseenHidden:
			hidden = append(hidden, r.Path)
		case UnseenCreatable:
			creatable = append(creatable, r.Path)
		case UnseenAbsent:
			absent = append(absent, r.Path)
		}
	}
	for _, g := range []struct {
		title string
		paths []string
	}{
		{"Denied, absent, and inside a writable directory (the sandbox could create it)", creatable},
		{"Denied, and not visible in the sandbox at all", hidden},
		{"Denied, and absent on this host", absent},
	} {
		if len(g.paths) > 0 {
			fmt.Fprintf(w, "\n%s:\n%s", g.title, wrap(g.paths))
		}
	}
	fmt.Fprintf(w, "\nEnvironment: %s\n", strings.Join(pl.Env, " "))
	if len(pl.Dropped) > 0 {
		fmt.Fprintf(w, "  dropped, they look like secrets: %s\n", strings.Join(pl.Dropped, " "))
	}
	switch pl.Network {
	case "off":
		fmt.Fprintln(w, "Network: off (own network namespace with only loopback)")
	default:
		fmt.Fprintf(w, "Network: %s %s; until vetto's relay exists: none (own network namespace with only loopback)\n", pl.Network, strings.Join(pl.NetworkAllow, " "))
	}
	fmt.Fprintf(w, "Limits: memory %s, pids %s, cpu %s\n", formatBytes(pl.Memory), formatCount(pl.Pids), formatCPU(pl.CPU))
	caps := "none"
	if len(pl.Capabilities) > 0 {
		caps = strings.Join(pl.Capabilities, " ")
	}
	fmt.Fprintf(w, "Capabilities: %s; no_new_privs\n", caps)
	if sc := pl.Spec.Linux.Seccomp; sc != nil {
		allowed := map[string]bool{}
		for _, s := range sc.Syscalls {
			if s.Action == "SCMP_ACT_ALLOW" {
				for _, n := range s.Names {
					allowed[n] = true
				}
			}
		}
		fmt.Fprintf(w, "Seccomp: %d syscalls allowed (some only with safe arguments), everything else fails with EPERM\n", len(allowed))
	}
	if len(pl.AllowDegraded) > 0 {
		fmt.Fprintf(w, "May run without: %s\n", strings.Join(pl.AllowDegraded, ", "))
	}
	return nil
}

// wrap lists words two spaces in, in lines of at most 80 columns.
func wrap(words []string) string {
	var b, line strings.Builder
	for _, w := range words {
		if line.Len() > 0 && line.Len()+1+len(w) > 78 {
			b.WriteString("  " + line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	if line.Len() > 0 {
		b.WriteString("  " + line.String() + "\n")
	}
	return b.String()
}

func formatBytes(n int64) string {
	if n <= 0 {
		return "unlimited"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i, exact := 0, n
	for exact%1024 == 0 && i < len(units)-1 {
		exact /= 1024
		i++
	}
	if exact < 1024 || i == len(units)-1 {
		return fmt.Sprintf("%d%s", exact, units[i])
	}
	// Not a whole number of any larger unit (2G = 2e9 bytes).
	f := float64(n)
	for i = 0; f >= 1024 && i < len(units)-1; i++ {
		f /= 1024
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".") + units[i]
}

func formatCount(n int64) string {
	if n <= 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

func formatCPU(f float64) string {
	if f <= 0 {
		return "unlimited"
	}
	return fmt.Sprint(f)
}
