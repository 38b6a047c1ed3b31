// Package darwin is vetto-runtime's macOS backend. Its sandbox, Seatbelt
// (sandbox-exec), is not built yet (DESIGN.md §9); until it is, the backend
// refuses every launch rather than run anything unconfined. Untagged so
// that Linux CI compiles it.
package darwin

import "github.com/vetto-dev/vetto-runtime/runtime"

// Backend is the macOS backend.
func Backend() runtime.Backend {
	return runtime.Unavailable{OS: "darwin", Sandbox: "Seatbelt (sandbox-exec)"}
}
