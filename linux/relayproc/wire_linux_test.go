package relayproc

import (
	"net/http"
	"net/textproto"
	"testing"

	"github.com/vetto-dev/vetto-runtime/linux/relaywire"
	"github.com/vetto-dev/vetto-runtime/relay"
)

// The runtime names a credential as the relay does without linking the
// relay: by relaywire.CredentialPort and textproto's canonical header
// name. Both must stay what the relay uses, or every launch with
// credentials fails its relay/credentials check.
func TestRuntimeNamesCredentialsAsTheRelayDoes(t *testing.T) {
	if relaywire.CredentialPort != relay.DefaultCredentialPort {
		t.Errorf("relaywire.CredentialPort %d, relay.DefaultCredentialPort %d", relaywire.CredentialPort, relay.DefaultCredentialPort)
	}
	for _, h := range []string{"authorization", "x-api-key", "X-API-KEY", "private-token", "x_odd header"} {
		if a, b := textproto.CanonicalMIMEHeaderKey(h), http.CanonicalHeaderKey(h); a != b {
			t.Errorf("%q: textproto %q, net/http %q", h, a, b)
		}
	}
}
