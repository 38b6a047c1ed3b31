//go:build !embedinit

package platform

import "github.com/vetto-dev/vetto-runtime/linux/relayproc"

// A build without the embedinit tag (go build, go install) embeds no relay
// executable, so it is its own: create starts this binary as
// `vetto-runtime relay <dir>`, and the relay (package relay, with
// net/http and crypto/tls) is linked in. make build's runtime links none
// of it; its relays run cmd/vetto-runtime-relay.
var relayMain = relayproc.Main
