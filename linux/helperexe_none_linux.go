//go:build !embedinit

package linux

// A build without the embedinit tag (go build, go test, go install)
// carries no helper executable: libcontainer starts every init from this
// binary, and this binary is its own relay executable too, as
// `vetto-runtime relay <dir>` (platform links linux/relayproc into such a
// build, relay_self_linux.go).
var (
	embeddedInit  = embeddedExe{prefix: initExePrefix}
	embeddedRelay = embeddedExe{prefix: relayExePrefix}
)
