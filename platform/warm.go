package platform

import "github.com/vetto-dev/vetto-runtime/runtime"

// codecCommands are the commands whose first steps parse a spec or a
// record, which a warm encoding/json cache makes faster (WarmCodecs).
var codecCommands = map[string]bool{"create": true, "run": true, "start": true, "exec": true, "delete": true, "verify": true}

// WarmCodecs begins, on a goroutine, building encoding/json's caches for
// the spec, the record and the backend's own state (runtime.WarmCodecs,
// warmBackendCodecs) when args (os.Args) run a command that will parse
// them. main calls it before it builds the command line, whose set-up
// (some 1.4 ms here) the warm-up then overlaps on another CPU; the
// command's own parse finds the caches built, or half built, and is
// never slower for it.
func WarmCodecs(args []string) {
	if wantsCodecs(args) {
		go func() {
			runtime.WarmCodecs()
			warmBackendCodecs()
		}()
	}
}

// wantsCodecs looks for a container command's name among the arguments
// before "--", without parsing flags: a flag's value or an id that
// happens to be a command's name only costs a warm-up nobody uses.
func wantsCodecs(args []string) bool {
	for _, a := range args[min(1, len(args)):] {
		if a == "--" {
			return false
		}
		if codecCommands[a] {
			return true
		}
	}
	return false
}
