package linux

import (
	"encoding/json"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
)

// WarmCodecs builds encoding/json's caches for libcontainer's types: the
// container's configs.Config, which libcontainer encodes for the init and
// into its state.json on every create, and its State (runtime.WarmCodecs
// says why, and platform.WarmCodecs when).
func WarmCodecs() {
	_, _ = json.Marshal(&configs.Config{})
	_, _ = json.Marshal(&libcontainer.State{})
}
