package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/report"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

func reportCommand() *ucli.Command {
	formats := make([]string, 0, len(report.Formats))
	for f := range report.Formats {
		formats = append(formats, f)
	}
	sort.Strings(formats)
	return &ucli.Command{
		Name:      "report",
		Usage:     "tell each container's story from the audit log: launch, level, verdicts, refusal or receipt",
		ArgsUsage: "[AUDIT.jsonl]",
		Description: `The report command reads an audit log — by default the host-wide one
(runtime.toml [audit] dir, /var/lib/vetto-runtime/audit.jsonl for root),
which every container's events reach whoever ran it, or a file --audit-log
wrote — and renders each container's story: its launch line (level,
posture, accepted degradations), every round of verdicts (pre-launch,
poststart with the canaries, verify, monitor), a refusal with its exit
status, the teardown receipt (with the monitor's rounds and kills), and an
outcome: verified, unverified, failed, refused or running.

   --format text    for a person (default)
   --format json    {"containers": [...]}
   --format junit   JUnit XML: a suite per container, a test case per check
                    (FAIL a failure, PARTIAL/UNAVAILABLE skipped), the launch
                    and the teardown
   --format sarif   SARIF 2.1.0 for code scanning: a result per check that
                    did not pass, a refusal, an incomplete teardown

It exits 1 when the log cannot be read or a line is not an audit event.`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Value: "text", Usage: "one of " + strings.Join(formats, ", ")},
			&ucli.StringFlag{Name: "id", Usage: "only this container's story"},
		},
		Action: func(c *ucli.Context) error {
			if err := args(c, 0, 1); err != nil {
				return err
			}
			render, ok := report.Formats[c.String("format")]
			if !ok {
				return runtime.Errorf(runtime.ErrInvalidInput, "report: --format %q: want one of %s", c.String("format"), strings.Join(formats, ", "))
			}
			path := c.Args().First()
			if path == "" {
				conf, err := runtime.LoadConfig(c.String("config"), c.IsSet("config"))
				if err != nil {
					return err
				}
				path = conf.Evidence().LogPath()
			}
			var in io.Reader
			if path == "-" {
				in = os.Stdin
			} else {
				f, err := os.Open(path)
				if err != nil {
					return runtime.Errorf(runtime.ErrInvalidInput, "report: %w", err)
				}
				defer f.Close()
				in = f
			}
			stories, err := report.Parse(in, c.String("id"))
			if err != nil {
				return runtime.Errorf(runtime.ErrInvalidInput, "report %s: %w", path, err)
			}
			if c.String("id") != "" && len(stories) == 0 {
				return runtime.Errorf(runtime.ErrInvalidInput, "report %s: no events of container %q", path, c.String("id"))
			}
			if err := render(c.App.Writer, stories); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			return nil
		},
	}
}
