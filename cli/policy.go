package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/hostpolicy"
	"github.com/vetto-dev/vetto-runtime/report"
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
								fmt.Fprintln(c.App.ErrWriter, report.Printable(e.Error()))
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
					return spec.WriteExplanation(c.App.Writer, name, plan)
				},
			},
		},
	}
}

// specFromPolicy is `spec --policy FILE` / `spec --profile P`: it compiles
// and writes the bundle (config.json and, for a host-root bundle, the empty
// rootfs directory the mounts are made in).
func specFromPolicy(c *ucli.Context) error {
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
	if w := hostpolicy.WritableRootOf(plan, bundle); w != "" {
		return runtime.Errorf(runtime.ErrPolicyCompileFailed, "bundle %s is inside %s, which the sandbox can write: it could rewrite its own config.json for the next run; put the bundle outside it, e.g. --bundle \"$(mktemp -d)\"", bundle, w)
	}
	if file := c.String("policy"); file != "" {
		if abs, err := filepath.Abs(file); err == nil {
			if w := hostpolicy.WritableRootOf(plan, hostpolicy.LookupPath(abs).Real); w != "" {
				if plan.Level == "strict" {
					return runtime.Errorf(runtime.ErrPolicyCompileFailed, "policy %s is inside %s, which the sandbox can write: at level strict the policy must be out of its reach; keep it elsewhere", file, w)
				}
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("the policy %s is inside %s, which the sandbox can write: a workload could change the policy your next compile reads (refused at level strict)", file, w))
			}
		}
	}
	printWarnings(c.App.ErrWriter, plan)

	if err := hostpolicy.WriteBundle(bundle, plan); err != nil {
		return bundleError(err)
	}
	return nil
}

// bundleError gives hostpolicy.WriteBundle's errors the kinds of their
// exit codes: a rootfs the sandbox cannot reach is a sandbox that cannot
// be established (125), a clash with what is in the bundle bad input (1).
func bundleError(err error) error {
	switch {
	case errors.Is(err, hostpolicy.ErrUnreachable):
		return runtime.WithKind(runtime.ErrPolicyCompileFailed, err)
	case errors.Is(err, hostpolicy.ErrInput):
		return runtime.WithKind(runtime.ErrInvalidInput, err)
	}
	return err
}

// policyRequested says whether `spec` should compile a policy: any of
// its flags asks for one (and --project alone is an error there, rather
// than a flag silently ignored).
func policyRequested(c *ucli.Context) bool {
	return c.IsSet("policy") || c.IsSet("profile") || c.IsSet("project") || c.IsSet("rootfs")
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
		data, err := runtime.ReadInput(file, runtime.MaxPolicyFile)
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
		fmt.Fprintln(w, "warning:", report.Printable(warning))
	}
}
