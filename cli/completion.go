package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// bashCompletion asks the binary itself for the words that may follow
// (urfave/cli's --generate-bash-completion), so it stays true to the
// commands and flags of whatever version is installed.
const bashCompletion = `# vetto-runtime completion for bash: source it, or put it in
# /etc/bash_completion.d/vetto-runtime ("vetto-runtime completion bash").
_vetto_runtime() {
	local cur="${COMP_WORDS[COMP_CWORD]}" words opts
	words=("${COMP_WORDS[@]:0:COMP_CWORD}")
	if [[ $cur == -* ]]; then
		opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
	else
		opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
	fi
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _vetto_runtime vetto-runtime
`

// zshCompletion is the bash one through zsh's bashcompinit.
const zshCompletion = `# vetto-runtime completion for zsh: source it from ~/.zshrc
# ("vetto-runtime completion zsh").
autoload -U +X bashcompinit && bashcompinit
` + bashCompletion

func completionCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Description: `completion prints a script that completes vetto-runtime's commands and
flags in the shell named: source it, e.g. in ~/.bashrc
  source <(vetto-runtime completion bash)
The bash and zsh scripts ask the installed binary for the candidates
(--generate-bash-completion), so they follow its version.`,
		Action: func(c *ucli.Context) error {
			if err := args(c, 1, 1); err != nil {
				return err
			}
			switch shell := c.Args().First(); shell {
			case "bash":
				_, err := fmt.Fprint(c.App.Writer, bashCompletion)
				return err
			case "zsh":
				_, err := fmt.Fprint(c.App.Writer, zshCompletion)
				return err
			case "fish":
				script, err := c.App.ToFishCompletion()
				if err != nil {
					return fmt.Errorf("fish completion: %w", err)
				}
				_, err = fmt.Fprint(c.App.Writer, script)
				return err
			default:
				return runtime.Errorf(runtime.ErrInvalidInput, "completion: unknown shell %q: want bash, zsh or fish", shell)
			}
		},
	}
}
