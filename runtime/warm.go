package runtime

import (
	"encoding/json"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks/canary"
)

// WarmCodecs builds encoding/json's per-type caches for what a container
// command reads and writes: the bundle's spec, the state record, audit
// events. The first encode or decode of a type in a process walks every
// field of it and of every type it holds — for specs.Spec some 70 struct
// types, 1.5 to 2.5 ms on the 2-CPU test host, then 0.1 ms a parse — and
// building an encoder builds the field lists of the whole type tree, which
// the decoder shares. platform.WarmCodecs runs this on a goroutine at
// process start, beside the command line's own set-up, so that the
// command's first parse finds the caches built. It only spends CPU: the
// values encoded are zero and the results are thrown away. canaries adds
// the canaries' exchange, which only create, start and run make.
func WarmCodecs(canaries bool) {
	_, _ = json.Marshal(&specs.Spec{})
	_, _ = json.Marshal(&Record{})
	_, _ = json.Marshal(&AuditEvent{})
	if canaries {
		canary.WarmCodecs()
	}
	// The decoder's own code, on a record that names a nested type.
	var rec Record
	_ = json.Unmarshal([]byte(`{"id":"w","baseline":{}}`), &rec)
}
