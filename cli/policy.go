package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/hostpolicy"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// This file is the host side of the policy compiler: it reads the policy
// file, gathers what spec.Compile needs to know about the host (paths,
// symlinks, the caller's environment and ids) and writes the bundle. The
// compiler itself (spec/) touches nothing.

// policyFlags are shared by `spec --policy` and `policy check|explain`.
func policyFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "profile", Usage: "built-in profile (" + strings.Join(spec.ProfileNames(), ", ") + ") when the policy has no 'extends', or alone without --policy"},
		&ucli.StringFlag{Name: "project", Usage: "the directory mounted read-write at its own path, $PROJECT (default: the current directory)"},
		&ucli.StringFlag{Name: "rootfs", Usage: "use this root filesystem instead of a host-root bundle (the host's /usr, /bin, /lib*, /etc read-only)"},
		&ucli.BoolFlag{Name: "dangerously-allow-project", Usage: "accept a --project of /, $HOME, /etc, /usr, /tmp, /var or another system directory: the sandbox can then write all of it"},
	}
}

func policyCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "policy",
		Usage: "check or explain a sandbox policy",
		Description: `A policy (TOML) says what a sandboxed command may read, write, see of the
environment and reach on the network; 'spec --policy FILE' compiles it into a
bundle. See docs/policy.md.`,
		Subcommands: []*ucli.Command{
			{
				Name:  "rules",
				Usage: "print the launch evaluator's rules: ID, where each applies, what it demands, the remedy",
				Description: `Every rule that decides whether a launch, exec or update may go ahead: the
strict level's demands, the operator floor's keys, the degradations, the exec
and update bounds, and how verification verdicts are acted on. The IDs are
the ones refusals name. --format markdown prints the table in
docs/security-levels.md; json an array.`,
				Flags: []ucli.Flag{&ucli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "text, markdown or json"}},
				Action: func(c *ucli.Context) error {
					if err := args(c, 0, 0); err != nil {
						return err
					}
					switch c.String("format") {
					case "text":
						fmt.Fprint(c.App.Writer, launch.RulesText())
					case "markdown":
						fmt.Fprint(c.App.Writer, launch.RulesMarkdown())
					case "json":
						enc := json.NewEncoder(c.App.Writer)
						enc.SetIndent("", "  ")
						return enc.Encode(launch.Rules)
					default:
						return runtime.Errorf(runtime.ErrInvalidInput, "invalid --format %q: want text, markdown or json", c.String("format"))
					}
					return nil
				},
			},
			{
				Name:      "check",
				Usage:     "validate a policy against this host",
				ArgsUsage: "[FILE]",
				Description: `Parses FILE, compiles it for this host and the current project, and reports
every problem with its file, line and key. Exits 1 if there is any.`,
				Flags: policyFlags(),
				Action: func(c *ucli.Context) error {
					if err := args(c, 0, 1); err != nil {
						return err
					}
					name, plan, err := explainPolicy(c, c.Args().First(), nil)
					if err != nil {
						var es spec.PolicyErrors
						if errors.As(err, &es) {
							for _, e := range es {
								fmt.Fprintln(c.App.ErrWriter, e)
							}
							return runtime.Errorf(runtime.ErrInvalidInput, "%s: %d problem(s)", name, len(es))
						}
						return err
					}
					printWarnings(c.App.ErrWriter, plan)
					fmt.Fprintf(c.App.Writer, "%s: ok (extends %s, level %s, network %s)\n", name, plan.Profile, plan.Level, plan.Network)
					return nil
				},
			},
			{
				Name:      "explain",
				Usage:     "say what a policy lets a command read, write, see and reach",
				ArgsUsage: "[FILE]",
				Description: `Compiles FILE for this host and the current project and lists what is
readable, writable, masked, which variables pass, the network, the limits and
the capabilities. --format json gives the same as an object.`,
				Flags: append(policyFlags(), &ucli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "text or json"}),
				Action: func(c *ucli.Context) error {
					if err := args(c, 0, 1); err != nil {
						return err
					}
					format := c.String("format")
					if format != "text" && format != "json" {
						return runtime.Errorf(runtime.ErrInvalidInput, "invalid --format %q: want text or json", format)
					}
					name, plan, err := explainPolicy(c, c.Args().First(), nil)
					if err != nil {
						return err
					}
					if format == "json" {
						enc := json.NewEncoder(c.App.Writer)
						enc.SetIndent("", "  ")
						return enc.Encode(plan)
					}
					printWarnings(c.App.ErrWriter, plan)
					return writeExplanation(c.App.Writer, name, plan)
				},
			},
		},
	}
}

// specFromPolicy is `spec --policy FILE` / `spec --profile P`: it compiles
// and writes the bundle (config.json and, for a host-root bundle, the empty
// rootfs directory the mounts are made in).
func specFromPolicy(c *ucli.Context) (retErr error) {
	if c.Bool("rootless") {
		return runtime.Errorf(runtime.ErrInvalidInput, "--rootless does not apply with --policy or --profile: the compiled spec maps your user into a user namespace when you are not root")
	}
	bundle := c.String("bundle")
	if bundle == "" {
		bundle = "."
	}
	bundle, err := filepath.Abs(bundle)
	if err != nil {
		return runtime.Errorf(runtime.ErrInvalidInput, "--bundle: %w", err)
	}
	if fi, err := os.Stat(bundle); err != nil || !fi.IsDir() {
		return runtime.Errorf(runtime.ErrInvalidInput, "bundle %s is not a directory", bundle)
	}
	config := filepath.Join(bundle, spec.ConfigFile)
	if _, err := os.Lstat(config); err == nil {
		return runtime.Errorf(runtime.ErrInvalidInput, "file %s exists. Remove it first", config)
	}
	_, plan, err := explainPolicy(c, c.String("policy"), c.Args().Slice())
	if err != nil {
		return err
	}
	// The bundle and the policy must be out of the sandbox's reach: a
	// workload that can rewrite its own config.json decides its next run
	// (the policy-mode issue, 12.1). create refuses such a bundle too.
	if w := writableRootOf(plan, bundle); w != "" {
		return runtime.Errorf(runtime.ErrPolicyCompileFailed, "bundle %s is inside %s, which the sandbox can write: it could rewrite its own config.json for the next run; put the bundle outside it, e.g. --bundle \"$(mktemp -d)\"", bundle, w)
	}
	if file := c.String("policy"); file != "" {
		if abs, err := filepath.Abs(file); err == nil {
			if w := writableRootOf(plan, hostpolicy.LookupPath(abs).Real); w != "" {
				if plan.Level == "strict" {
					return runtime.Errorf(runtime.ErrPolicyCompileFailed, "policy %s is inside %s, which the sandbox can write: at level strict the policy must be out of its reach; keep it elsewhere", file, w)
				}
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("the policy %s is inside %s, which the sandbox can write: a workload could change the policy your next compile reads (refused at level strict)", file, w))
			}
		}
	}
	printWarnings(c.App.ErrWriter, plan)

	if plan.Rootfs == "" {
		// The host-root bundle's root is an empty directory: every
		// path the sandbox sees is a mount made inside it.
		rootfs := filepath.Join(bundle, plan.Spec.Root.Path)
		created, err := makeEmptyDir(rootfs)
		if err != nil {
			return err
		}
		if created {
			defer func() {
				if retErr != nil {
					os.Remove(rootfs)
				}
			}()
		}
		// The sandbox sets up its rootfs from inside its user namespace,
		// as its own uid: it must be able to enter the rootfs, and finds
		// its mount points made (it must not own where they are made).
		reachErr := hostpolicy.Reachable(rootfs, plan.UID, plan.GID)
		if reachErr != nil {
			// A bundle directory of the caller's own that only lacks
			// search for others (mktemp -d makes 0700) gets it: search
			// lets the sandbox walk to rootfs/ by name, not list or read
			// anything (config.json is 0600).
			if fi, serr := os.Stat(bundle); serr == nil && fi.Mode().Perm()&0o001 == 0 {
				if cerr := os.Chmod(bundle, fi.Mode().Perm()|0o001); cerr == nil {
					reachErr = hostpolicy.Reachable(rootfs, plan.UID, plan.GID)
				}
			}
		}
		if reachErr != nil {
			return runtime.Errorf(runtime.ErrPolicyCompileFailed, "bundle %s: the sandbox runs as host uid %d, which cannot reach its rootfs: %v; choose a --bundle it can reach (e.g. under /var/tmp), or chmod o+x that directory", bundle, plan.UID, reachErr)
		}
		if err := hostpolicy.MakeMountpoints(rootfs, plan.Spec); err != nil {
			return err
		}
	}
	var written []string
	defer func() {
		if retErr != nil {
			for i := len(written) - 1; i >= 0; i-- {
				os.Remove(written[i])
			}
		}
	}()
	for _, f := range plan.Files {
		// Copies the sandbox sees instead of a host file (a git config
		// without its credentials): read-only, beside config.json.
		path := filepath.Join(bundle, f.Path)
		for dir := filepath.Dir(path); dir != bundle; dir = filepath.Dir(dir) {
			if _, err := os.Lstat(dir); err != nil {
				if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("write %s: %w", path, err)
				}
				written = append(written, dir)
			}
		}
		if err := writeNew(path, []byte(f.Content), 0o444); err != nil {
			return err
		}
		written = append(written, path)
	}
	data, err := json.MarshalIndent(plan.Spec, "", "\t")
	if err != nil {
		return fmt.Errorf("encode %s: %w", config, err)
	}
	// O_EXCL: never clobber a bundle's config, not even in a race.
	// 0600: the compiled environment is in it.
	f, err := os.OpenFile(config, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return runtime.Errorf(runtime.ErrInvalidInput, "file %s exists. Remove it first", config)
		}
		return fmt.Errorf("write %s: %w", config, err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		os.Remove(config)
		return fmt.Errorf("write %s: %w", config, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(config)
		return fmt.Errorf("write %s: %w", config, err)
	}
	return nil
}

// writableRootOf returns the source of a read-write bind in the plan's spec
// that contains path, "" when none does.
func writableRootOf(plan *spec.Plan, path string) string {
	real := hostpolicy.LookupPath(path).Real
	for _, m := range plan.Spec.Mounts {
		if m.Type != "bind" || !slices.Contains(m.Options, "rw") || !filepath.IsAbs(m.Source) {
			continue
		}
		if hostpolicy.Within(real, m.Source) {
			return m.Source
		}
	}
	return ""
}

// writeNew writes a file that must not exist yet (O_EXCL).
func writeNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// policyRequested says whether `spec` should compile a policy: any of
// its flags asks for one (and --project alone is an error there, rather
// than a flag silently ignored).
func policyRequested(c *ucli.Context) bool {
	return c.IsSet("policy") || c.IsSet("profile") || c.IsSet("project") || c.IsSet("rootfs")
}

// makeEmptyDir creates dir, or accepts it if it exists and is empty: a
// host-root bundle must not pick up whatever a previous rootfs held.
func makeEmptyDir(dir string) (created bool, err error) {
	err = os.Mkdir(dir, 0o755)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("create %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("%s: %w", dir, err)
	}
	if len(entries) > 0 {
		return false, runtime.Errorf(runtime.ErrInvalidInput, "%s exists and is not empty: a host-root bundle needs an empty rootfs (or pass --rootfs %s to use it as the root filesystem)", dir, dir)
	}
	return false, nil
}

// explainPolicy loads the policy (file, or the --profile alone) and
// compiles it for this host. name is what to call it in messages.
func explainPolicy(c *ucli.Context, file string, cmd []string) (name string, plan *spec.Plan, err error) {
	profile := c.String("profile")
	var p *spec.Policy
	// What the parser found wrong: with them, the compiler still judges
	// what did parse, so that one pass names every problem.
	var parseErrs spec.PolicyErrors
	switch {
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return file, nil, runtime.Errorf(runtime.ErrInvalidInput, "read policy: %w", err)
		}
		if p, parseErrs = spec.ParsePolicyPartial(data, file); p == nil {
			return file, nil, runtime.WithKind(runtime.ErrInvalidInput, parseErrs)
		}
		if profile != "" {
			if p.Extends.Set && p.Extends.Value != profile {
				return file, nil, runtime.Errorf(runtime.ErrInvalidInput, "%s: the policy extends %q but --profile is %q: remove one", p.Extends.At, p.Extends.Value, profile)
			}
			if _, ok := spec.LookupProfile(profile); !ok {
				return file, nil, runtime.Errorf(runtime.ErrInvalidInput, "--profile: unknown profile %q (one of %s)", profile, strings.Join(spec.ProfileNames(), ", "))
			}
			p.Extends = spec.Setting[string]{Value: profile, Set: true, At: spec.Pos{File: "--profile"}}
		}
	case profile != "":
		if p, err = spec.ProfilePolicy(profile); err != nil {
			return "profile " + profile, nil, runtime.WithKind(runtime.ErrInvalidInput, err)
		}
	default:
		return "", nil, runtime.Errorf(runtime.ErrInvalidInput, "name a policy file or --profile (one of %s)", strings.Join(spec.ProfileNames(), ", "))
	}
	conf, err := runtime.LoadConfig(c.String("config"), c.IsSet("config"))
	if err != nil {
		return p.File, nil, err
	}
	plan, err = hostpolicy.Compile(p, hostpolicy.Options{
		Project: c.String("project"), Rootfs: c.String("rootfs"), Args: cmd,
		SandboxID: conf.SandboxID(), AllowBroadProject: c.Bool("dangerously-allow-project"),
	})
	if len(parseErrs) > 0 {
		var more spec.PolicyErrors
		if errors.As(err, &more) {
			parseErrs = parseErrs.Merge(more)
		}
		return p.File, nil, runtime.WithKind(runtime.ErrInvalidInput, parseErrs)
	}
	if err != nil {
		if errors.Is(err, spec.ErrUnsafe) {
			return p.File, nil, runtime.WithKind(runtime.ErrPolicyCompileFailed, err)
		}
		return p.File, nil, runtime.WithKind(runtime.ErrInvalidInput, err)
	}
	return p.File, plan, nil
}

func printWarnings(w io.Writer, plan *spec.Plan) {
	for _, warning := range plan.Warnings {
		fmt.Fprintln(w, "warning:", warning)
	}
}

// writeExplanation prints a plan for a person.
func writeExplanation(w io.Writer, name string, pl *spec.Plan) error {
	prof, _ := spec.LookupProfile(pl.Profile)
	fmt.Fprintf(w, "%s: extends %s: %s\n", name, pl.Profile, prof.Summary)
	root := "the host's system directories, read-only (host-root bundle)"
	if pl.Rootfs != "" {
		root = pl.Rootfs + ", read-only"
	}
	fmt.Fprintf(w, "level %s · root filesystem: %s\n", pl.Level, root)

	groups := []struct {
		title string
		match func(spec.PathRule) bool
	}{
		{"Readable (read-only)", func(r spec.PathRule) bool { return r.Access == spec.AccessRead }},
		{"Writable", func(r spec.PathRule) bool { return r.Access == spec.AccessWrite }},
		{"Masked (unreadable, even by root in the sandbox)", func(r spec.PathRule) bool {
			return r.Access == spec.AccessMasked && !strings.HasPrefix(r.Note, "does not exist") && r.Note != "not visible in the sandbox"
		}},
		{"Not mounted", func(r spec.PathRule) bool { return r.Access == spec.AccessNone }},
	}
	for _, g := range groups {
		var rows []spec.PathRule
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
		switch {
		case r.Access != spec.AccessMasked:
		case r.Note == "not visible in the sandbox":
			hidden = append(hidden, r.Path)
		case strings.Contains(r.Note, "could create it"):
			creatable = append(creatable, r.Path)
		case strings.HasPrefix(r.Note, "does not exist"):
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
