// Package windows is vetto-runtime's Windows backend: the process is
// created suspended inside a Job Object (kill on close, limits, UI
// restrictions, no breakaway) from its first instruction, with a
// restricted low-integrity token in a zero-capability AppContainer (no
// network), held by a holder process until start (docs/platforms.md).
//
// The translator (spec → Plan: job limits, token, AppContainer, file
// grants, command line, refusals) and the judges of what the host reads
// are pure and carry no build tag, so Linux CI compiles and tests them;
// they cannot import golang.org/x/sys/windows, so the numbers they use are
// defined here and checked against it at compile time in the tagged
// files. Only the holder, the launcher and the fact readers are in
// _windows.go files.
package windows
