// Package darwin is vetto-runtime's macOS backend: a Seatbelt profile
// (SBPL) compiled from the OCI spec and launched through sandbox-exec,
// held until start, killed by process group (docs/platforms.md).
//
// The translator (spec → Plan: profile, parameters, refusals,
// degradations) and the judges of what the host reads are pure and carry
// no build tag, so Linux CI compiles and tests them; only the launcher,
// the holder and the fact readers are in _darwin.go files. Paths reach the
// profile only as sandbox-exec -D parameters, never as text in it: the
// profile of a spec depends on its shape, not on the names of its paths.
package darwin
