package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	goruntime "runtime"
)

// ProbeArg is the argument with which the runtime runs itself inside a
// container as the canary probe: main dispatches it before the CLI, as it
// does libcontainer's "init".
const ProbeArg = "probe"

// LandlockRestrictor restricts the calling OS thread (locked by the
// caller) with a dev.vetto.landlock annotation. The Landlock shim
// provides it; nil means this build applies no Landlock, and neither to
// the container's process, so the probe stays as restricted as that.
type LandlockRestrictor func(annotation string) error

// Probe is the canary probe's body, running inside the container with its
// restrictions. It tries what the config lists and reports each outcome as
// JSON to out. Its report is the container's word; the host judges from
// its own facts (RunCanaries).
func Probe(arg string, restrict LandlockRestrictor, out io.Writer) error {
	var cfg ProbeConfig
	if err := json.Unmarshal([]byte(arg), &cfg); err != nil {
		return fmt.Errorf("probe config: %w", err)
	}
	// Landlock binds the thread that restricts itself and what it
	// starts; every attempt below runs on this one thread.
	goruntime.LockOSThread()
	var rep ProbeReport
	if cfg.Landlock != "" {
		switch {
		case restrict == nil:
			rep.Landlock = "not applied: this build has no Landlock shim"
		default:
			if err := restrict(cfg.Landlock); err != nil {
				return fmt.Errorf("probe landlock: %w", err)
			}
			rep.Landlock = "applied"
		}
	}
	for _, p := range cfg.MaskedRead {
		rep.Reads = append(rep.Reads, probeRead(p))
	}
	for _, dir := range cfg.WriteInside {
		rep.Writes = append(rep.Writes, probeWrite(dir, cfg.Nonce))
	}
	for _, dir := range cfg.WriteOutside {
		rep.Writes = append(rep.Writes, probeWrite(dir, cfg.Nonce))
	}
	if cfg.Connect != "" {
		a := ProbeAttempt{Path: cfg.Connect}
		conn, err := net.DialTimeout("tcp4", cfg.Connect, probeDialTimeout)
		if err != nil {
			a.Err = err.Error()
		} else {
			conn.Close()
		}
		rep.Connect = &a
	}
	return json.NewEncoder(out).Encode(rep)
}

func probeRead(p string) ProbeAttempt {
	a := ProbeAttempt{Path: p}
	f, err := os.Open(p)
	if err != nil {
		a.Err = err.Error()
		return a
	}
	defer f.Close()
	buf := make([]byte, MaxCanaryRead)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		a.Err = err.Error()
	}
	a.Size = n
	if n > 0 {
		a.SHA256 = Digest(buf[:n])
	}
	return a
}

func probeWrite(dir, nonce string) ProbeAttempt {
	a := ProbeAttempt{Path: dir}
	// O_EXCL: the probe proves it can create, not that a file was there.
	f, err := os.OpenFile(CanaryFile(dir, nonce), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		a.Err = err.Error()
		return a
	}
	_, err = f.WriteString(nonce)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		a.Err = err.Error()
	}
	return a
}
