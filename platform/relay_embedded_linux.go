//go:build embedinit

package platform

import (
	"fmt"
	"os"
)

// make build's runtime embeds the relay executable (cmd/vetto-runtime-relay)
// and starts relays from it; it links none of the relay's code. Run as
// `vetto-runtime relay` (by hand, or by something that took it for an
// older runtime), it says so.
func relayMain([]string) int {
	fmt.Fprintln(os.Stderr, "vetto-runtime relay: this build starts relays from its embedded relay executable; `relay` is started by create, not by hand")
	return 1
}
