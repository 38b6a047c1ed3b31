// Package windows is vetto-runtime's Windows backend. Its sandbox, a Job
// Object with a restricted token, is not built yet (DESIGN.md §9); until it
// is, the backend refuses every launch rather than run anything
// unconfined. Untagged so that Linux CI compiles it.
package windows

import "github.com/vetto-dev/vetto-runtime/runtime"

// Backend is the Windows backend.
func Backend() runtime.Backend {
	return runtime.Unavailable{OS: "windows", Sandbox: "a Job Object with a restricted token"}
}
