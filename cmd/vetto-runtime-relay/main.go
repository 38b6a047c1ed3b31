// vetto-runtime-relay is the executable a container's egress relay runs
// as (docs/network.md): linux/relayproc and the relay's decisions and
// servers (package relay, with net/http and crypto/tls), and nothing else
// of the runtime. make build builds it and embeds it in vetto-runtime,
// which writes it once into its private directory and starts each relay
// from there (docs/architecture.md, "The helper executables"), so that
// the runtime's own binary, which every create, start, exec and delete
// starts, carries none of that code and pays none of its start-up.
//
// Run by hand it says how it is started and exits 1.
package main

import "os"

func main() {
	os.Exit(run(os.Args))
}
