//go:build embedinit

package linux

import (
	_ "embed"
	"strings"
)

// The helper executables make build compiled (cmd/vetto-runtime-init,
// cmd/vetto-runtime-relay) and their sha256, as written into initexe/ and
// relayexe/ before this binary was built.
var (
	//go:embed initexe/vetto-runtime-init
	embeddedInitData string
	//go:embed initexe/vetto-runtime-init.sha256
	embeddedInitSum string
	//go:embed relayexe/vetto-runtime-relay
	embeddedRelayData string
	//go:embed relayexe/vetto-runtime-relay.sha256
	embeddedRelaySum string
)

var (
	embeddedInit  = embeddedExe{prefix: initExePrefix, data: embeddedInitData, sum: strings.TrimSpace(embeddedInitSum)}
	embeddedRelay = embeddedExe{prefix: relayExePrefix, data: embeddedRelayData, sum: strings.TrimSpace(embeddedRelaySum)}
)
