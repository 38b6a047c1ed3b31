package platform

import "github.com/vetto-dev/vetto-runtime/runtime"

// codecCommands are the commands whose first steps parse a spec or a
// record, which a warm encoding/json cache makes faster (WarmCodecs), and
// whether they exchange the canaries' messages with an init: only a
// create, a start and a run do; an exec, a delete or a verify would build
// those codecs for nothing (about 0.13 ms of CPU in an exec).
var codecCommands = map[string]warmth{
	"create": codecsAndCanaries, "run": codecsAndCanaries, "start": codecsAndCanaries,
	"exec": codecs, "delete": codecs, "verify": codecs,
}

// warmth is what a command's warm-up builds.
type warmth int

const (
	noCodecs warmth = iota
	codecs
	codecsAndCanaries
)

// WarmCodecs begins, on a goroutine, building encoding/json's caches for
// the spec, the record and the backend's own state (runtime.WarmCodecs,
// warmBackendCodecs) when args (os.Args) run a command that will parse
// them. main calls it before it builds the command line, whose set-up
// (some 1.4 ms here) the warm-up then overlaps on another CPU; the
// command's own parse finds the caches built, or half built, and is
// never slower for it.
func WarmCodecs(args []string) {
	if w := wantsCodecs(args); w != noCodecs {
		go func() {
			runtime.WarmCodecs(w == codecsAndCanaries)
			warmBackendCodecs()
		}()
	}
}

// wantsCodecs looks for a container command's name among the arguments
// before "--", without parsing flags: a flag's value or an id that
// happens to be a command's name only costs a warm-up nobody uses.
func wantsCodecs(args []string) warmth {
	for _, a := range args[min(1, len(args)):] {
		if a == "--" {
			return noCodecs
		}
		if w, ok := codecCommands[a]; ok {
			return w
		}
	}
	return noCodecs
}
