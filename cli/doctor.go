package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

func (h *host) doctorCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "doctor",
		Usage: "probe this host's sandboxing features and say which security levels it can honour",
		Description: `doctor probes the host afresh (Landlock ABI, seccomp filter and notify, each
namespace type, user namespaces, cgroup mode, cgroup.kill, memory/pids
controllers, pidfd) and says which levels it can honour. Run as a normal
user it also makes, step by step, the user and network namespaces a
container needs, and reports the id mappers, subordinate id ranges and
whether a cgroup is delegated to this user. It is a diagnosis, not proof:
every launch verifies its own live container from host facts.`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "text or json"},
		},
		Action: func(c *ucli.Context) error {
			if err := args(c, 0, 0); err != nil {
				return err
			}
			format := c.String("format")
			if format != "text" && format != "json" {
				return runtime.Errorf(runtime.ErrInvalidInput, "invalid --format %q: want text or json", format)
			}
			d, ok := h.backend().(runtime.Doctor)
			if !ok {
				return runtime.Errorf(runtime.ErrBackendUnavailable, "the %s backend cannot probe this host", h.backend().Name())
			}
			diag := d.Doctor()
			if format == "json" {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(diag)
			}
			w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "backend\t%s\ttier %s\n", diag.Backend, diag.Tier)
			for _, p := range diag.Probes {
				fmt.Fprintf(w, "%s\t%s\t%s\n", p.Name, p.Status, p.Detail)
			}
			_ = w.Flush()
			fmt.Fprintln(c.App.Writer)
			for _, l := range diag.Levels {
				if l.OK {
					fmt.Fprintf(c.App.Writer, "level %-9s can be honoured\n", l.Level)
				} else {
					fmt.Fprintf(c.App.Writer, "level %-9s cannot be honoured: missing %v\n", l.Level, l.Missing)
				}
			}
			fmt.Fprintln(c.App.Writer)
			fmt.Fprintln(c.App.Writer, diag.Note)
			return nil
		},
	}
}
