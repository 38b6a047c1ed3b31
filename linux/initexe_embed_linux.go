//go:build embedinit

package linux

import (
	_ "embed"
	"strings"
)

// The init executable make build compiled (cmd/vetto-runtime-init) and its
// sha256, as written into initexe/ before this binary was built.
var (
	//go:embed initexe/vetto-runtime-init
	embeddedInitData string
	//go:embed initexe/vetto-runtime-init.sha256
	embeddedInitSum string
)

var embedded = embeddedInit{data: embeddedInitData, sum: strings.TrimSpace(embeddedInitSum)}
