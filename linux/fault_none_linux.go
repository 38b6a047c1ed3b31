//go:build !vetto_faultinject

package linux

import (
	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
)

// FaultInjection is false in every real build: no environment variable
// or flag can make this binary build other than the frozen spec.
const FaultInjection = false

func injectFault(*configs.Config, *libcontainer.Process) {}

func execUnconfined() bool { return false }

func faultUsernsMaps() bool { return false }

func slowSignals() {}
