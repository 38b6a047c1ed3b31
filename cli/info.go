package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/report"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

func (h *host) stateCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "state",
		Usage:     "output the state of a container",
		ArgsUsage: "<container-id>",
		Description: `The state command outputs the OCI state of a container as JSON, with runc's
extra fields (rootfs, created, owner) and vetto's own under "vetto".`,
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			st, err := r.State(c.Args().First())
			if err != nil {
				return err
			}
			return printJSON(c, st)
		}),
	}
}

func (h *host) listCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "list",
		Usage: "lists containers started by vetto-runtime with the given root",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: `select one of: table or json`},
			&ucli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "display only container IDs"},
		},
		Action: func(c *ucli.Context) error {
			if err := args(c, 0, 0); err != nil {
				return err
			}
			format := c.String("format")
			if format != "table" && format != "json" {
				return runtime.Errorf(runtime.ErrInvalidInput, "invalid format option %q: want table or json", format)
			}
			r, err := h.newRuntime(c)
			if err != nil {
				return err
			}
			list, err := r.List()
			if err != nil {
				return err
			}
			if c.Bool("quiet") {
				for _, s := range list {
					fmt.Fprintln(c.App.Writer, s.ID)
				}
				return nil
			}
			if format == "json" {
				return json.NewEncoder(c.App.Writer).Encode(list)
			}
			w := tabwriter.NewWriter(c.App.Writer, 12, 1, 3, ' ', 0)
			fmt.Fprint(w, "ID\tPID\tSTATUS\tBUNDLE\tCREATED\tOWNER\n")
			for _, s := range list {
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", report.Printable(s.ID), s.Pid, s.Status, report.Printable(s.Bundle), s.Created.Format(time.RFC3339Nano), report.Printable(s.Owner))
			}
			return w.Flush()
		},
	}
}

func (h *host) specCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "spec",
		Usage: "create a new specification file",
		Description: `The spec command writes a starter config.json (runc's default: sh in a rootfs
directory named "rootfs") into the bundle directory. It refuses to overwrite an
existing config.json.

With --policy FILE or --profile P it compiles a sandbox policy instead: the
command after -- (default: an interactive sh) runs in $PROJECT (--project,
default the current directory) on the host's own system directories,
read-only, or on --rootfs DIR. See 'vetto-runtime policy explain'.`,
		ArgsUsage: "[-- ARGS…]",
		Flags: append([]ucli.Flag{
			&ucli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Usage: "path to the root of the bundle directory"},
			&ucli.BoolFlag{Name: "rootless", Usage: "generate a configuration for a rootless container"},
			&ucli.StringFlag{Name: "policy", Usage: "compile this policy file (TOML) into a sandbox for -- ARGS… (see 'policy explain')"},
		}, policyFlags()...),
		Action: func(c *ucli.Context) error {
			if policyRequested(c) {
				return specFromPolicy(c)
			}
			if c.NArg() > 0 {
				// `spec -- make test` means a sandbox for that command,
				// which only a policy gives.
				return runtime.Errorf(runtime.ErrInvalidInput, "spec: %q after -- is the command of a policy sandbox: add --profile NAME (default, strict, audit, permissive) or --policy FILE; without them spec writes runc's starter config.json and takes no arguments", strings.Join(c.Args().Slice(), " "))
			}
			s, err := h.backend().ExampleSpec(c.Bool("rootless"))
			if err != nil {
				return err
			}
			path := filepath.Join(c.String("bundle"), "config.json")
			data, err := json.MarshalIndent(s, "", "\t")
			if err != nil {
				return err
			}
			// O_EXCL: never clobber a bundle's config, not even in a race.
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
			if err != nil {
				if errors.Is(err, fs.ErrExist) {
					return runtime.Errorf(runtime.ErrInvalidInput, "file %s exists. Remove it first", path)
				}
				return fmt.Errorf("write %s: %w", path, err)
			}
			if _, err := f.Write(data); err != nil {
				f.Close()
				return fmt.Errorf("write %s: %w", path, err)
			}
			return f.Close()
		},
	}
}

func (h *host) featuresCommand() *ucli.Command {
	return &ucli.Command{
		Name:        "features",
		Usage:       "show the enabled features",
		Description: "Show the OCI features document of this build on this host, as JSON.",
		Action: func(c *ucli.Context) error {
			if err := args(c, 0, 0); err != nil {
				return err
			}
			f, err := h.backend().Features()
			if err != nil {
				return err
			}
			enc := json.NewEncoder(c.App.Writer)
			enc.SetIndent("", "    ")
			return enc.Encode(f)
		},
	}
}

func printJSON(c *ucli.Context, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(c.App.Writer, string(data))
	return err
}
