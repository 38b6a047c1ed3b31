// The OCI runtime-tools v0.9.0 validation suite that run.sh builds and runs
// (make conformance). A module of its own, so the main module's ./... never
// sees it. v0.9.0 has no go.mod: the first block pins the versions its Godeps
// name; the second is what the Go toolchain resolved for the rest. There is no
// Go file here, so `go mod tidy` would empty this file: do not run it.
module github.com/vetto-dev/vetto-runtime/integration/conformance

go 1.26.0

require (
	github.com/opencontainers/runtime-spec v1.0.2
	github.com/opencontainers/runtime-tools v0.9.0
	github.com/opencontainers/selinux v1.3.0
	github.com/satori/go.uuid v1.1.0
	github.com/urfave/cli v1.19.1
)

require (
	github.com/blang/semver v3.5.1+incompatible // indirect
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/mndrix/tap-go v0.0.0-20171203230836-629fa407e90b // indirect
	github.com/mrunalp/fileutils v0.5.1 // indirect
	github.com/sirupsen/logrus v1.10.2 // indirect
	github.com/syndtr/gocapability v0.0.0-20200815063812-42c35b437635 // indirect
	github.com/xeipuuv/gojsonpointer v0.0.0-20180127040702-4e3ac2762d5f // indirect
	github.com/xeipuuv/gojsonreference v0.0.0-20180127040603-bd5ef7bd5415 // indirect
	github.com/xeipuuv/gojsonschema v1.2.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
)
