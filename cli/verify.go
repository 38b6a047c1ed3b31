package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/report"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// verifyReport is `verify --format json`.
type verifyReport struct {
	ID string `json:"id"`
	// Posture is what the spec itself gives of the host away, beside
	// the verdict: "isolated", or "weakened" and what.
	Posture      string         `json:"posture"`
	Weakened     []string       `json:"weakened,omitempty"`
	Verification string         `json:"verification"`
	Results      []hooks.Result `json:"results"`
}

func (h *host) verifyCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "verify",
		Usage:     "verify a running container from the host: identity, namespaces, cgroups, canaries, containment, masks, limits",
		ArgsUsage: "<container-id>",
		Description: `The verify command re-runs the runtime verification on a running container:
P1 the init is the process verified at create, P2 its namespaces and cgroups
are unchanged, P3 canary probes (masked read, writes outside and inside the
allowed roots, the host's loopback) judged from the host, P4 every process of
the container is in its pid namespace and cgroup, P6 masked paths are still
masked, P7 memory and pids limits read back from the cgroup. A FAIL kills the
container at levels standard and strict and exits 125; PARTIAL or UNAVAILABLE
checks leave it running and not verified (exit 0, summary INCONCLUSIVE).`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: `select one of: table or json`},
		},
		Action: h.withRuntime(1, 1, func(c *ucli.Context, r *runtime.Runtime) error {
			format := c.String("format")
			if format != "table" && format != "json" {
				return runtime.Errorf(runtime.ErrInvalidInput, "invalid format option %q: want table or json", format)
			}
			id := c.Args().First()
			results, verr := r.Verify(id)
			if results == nil {
				return verr
			}
			summary := summaryName(results)
			posture, weakened := "", []string(nil)
			if st, err := r.State(id); err == nil {
				posture, weakened = st.Vetto.Posture, st.Vetto.Weakened
			}
			if format == "json" {
				if err := json.NewEncoder(c.App.Writer).Encode(verifyReport{ID: id, Posture: posture, Weakened: weakened, Verification: summary, Results: results}); err != nil {
					return err
				}
				return verr
			}
			// The posture first: a PASS says the container is what its
			// spec says, and the spec may give the host away.
			if posture != "" {
				line := "posture: " + posture
				if len(weakened) > 0 {
					line += " (" + strings.Join(weakened, ", ") + ")"
				}
				fmt.Fprintln(c.App.Writer, report.Printable(line))
			}
			w := tabwriter.NewWriter(c.App.Writer, 4, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CHECK\tVERDICT\tEVIDENCE\tEXPECTED\tFOUND")
			for _, res := range results {
				p := report.Printable
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", p(res.Check), p(string(res.Verdict)), p(string(res.Evidence)), p(res.Expected), p(res.Found))
			}
			if posture == "weakened" {
				// Never a clean PASS: the container is what its spec
				// says, and the spec gives the host away.
				summary += ", posture weakened"
			}
			fmt.Fprintf(w, "verification of %s: %s\n", id, summary)
			if err := w.Flush(); err != nil {
				return err
			}
			return verr
		}),
	}
}

func (h *host) hookCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "hook",
		Usage:     "run vetto's own OCI hook: verify a running container (poststart) or its teardown (poststop)",
		ArgsUsage: "poststart|poststop",
		Description: `The hook command is what the poststart and poststop entries vetto puts in a
spec run when another runtime drives the bundle; vetto-runtime itself does
the same in-process. It reads the OCI state on stdin, prints its verdicts as
JSON on stdout and exits 125 on a FAIL (runtime-spec 1.3: a failing
poststart hook stops the container). Without the runtime's baseline and
probe it can judge only what the host sees: namespaces and masks after
start, an empty cgroup after delete.`,
		Action: func(c *ucli.Context) error {
			if err := args(c, 1, 1); err != nil {
				return err
			}
			f, ok := h.facts().(hooks.PostFacts)
			if !ok {
				return runtime.Errorf(runtime.ErrBackendUnavailable, "hook: no host facts on this platform")
			}
			in, err := hooks.ReadHookInput(os.Stdin)
			if err != nil {
				return runtime.Errorf(runtime.ErrInvalidInput, "hook: %w", err)
			}
			var results []hooks.Result
			kind := runtime.ErrPostLaunchFailed
			switch phase := c.Args().First(); phase {
			case spec.RuntimeHookPoststart:
				results = hooks.HookPoststart(in, f)
			case spec.RuntimeHookPoststop:
				results, kind = hooks.HookPoststop(in, f), runtime.ErrTeardownIncomplete
			default:
				return runtime.Errorf(runtime.ErrInvalidInput, "hook: unknown phase %q: want poststart or poststop", phase)
			}
			if err := json.NewEncoder(c.App.Writer).Encode(verifyReport{ID: in.State.ID, Verification: summaryName(results), Results: results}); err != nil {
				return err
			}
			if hooks.Summarize(results) == hooks.AnyFail {
				return runtime.Errorf(kind, "%s verification of %q failed: %s", c.Args().First(), in.State.ID, hooks.Failed(hooks.Only(results, hooks.Fail)))
			}
			return nil
		},
	}
}

func summaryName(results []hooks.Result) string {
	return map[hooks.Summary]string{hooks.AllPass: "PASS", hooks.Inconclusive: "INCONCLUSIVE", hooks.AnyFail: "FAIL"}[hooks.Summarize(results)]
}
