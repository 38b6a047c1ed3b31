//go:build !embedinit

package linux

// embedded is empty in a build without the embedinit tag (go build, go
// test, go install): libcontainer starts every init from this binary.
var embedded embeddedInit
