package canary

import (
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
)

// ProbeArg is the argument with which a backend that cannot run the
// canaries in the container's own process (darwin, windows: no pre-exec
// step) runs the runtime itself, sandboxed as the container is, as a
// probe: main dispatches it before the CLI. The probe reads its Config
// from stdin.
const ProbeArg = "probe"

// Try makes the canaries' attempts on the calling thread, which must be in
// the domain being judged (the init's pre-exec step, restricted exactly as
// the program it is about to exec will be), and reports each outcome. The
// report is the process's word; the host judges from its own facts
// (hooks.CanarySession.Judge).
func Try(cfg Config) Report {
	var rep Report
	for _, p := range cfg.MaskedRead {
		rep.Reads = append(rep.Reads, tryRead(p))
	}
	for _, dir := range cfg.WriteInside {
		rep.Writes = append(rep.Writes, tryWrite(dir, cfg.Nonce))
	}
	for _, dir := range cfg.WriteOutside {
		rep.Writes = append(rep.Writes, tryWrite(dir, cfg.Nonce))
	}
	if cfg.Connect != "" {
		a := Attempt{Path: cfg.Connect}
		if err := connectOnce(cfg.Connect); err != nil {
			a.Err = err.Error()
		}
		rep.Connect = &a
	}
	return rep
}

// Probe is a probe process's body: it reads the config from in (one
// message), makes the attempts on its one locked thread and writes the
// report to out.
func Probe(in io.Reader, out io.Writer) error {
	var cfg Config
	if err := ReadMessage(in, &cfg); err != nil {
		return fmt.Errorf("probe config: %w", err)
	}
	goruntime.LockOSThread()
	return WriteMessage(out, Try(cfg))
}

func tryRead(p string) Attempt {
	a := Attempt{Path: p}
	f, err := os.Open(p)
	if err != nil {
		a.Err = err.Error()
		return a
	}
	defer f.Close()
	buf := make([]byte, MaxRead)
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

func tryWrite(dir, nonce string) Attempt {
	a := Attempt{Path: dir}
	// O_EXCL: the process proves it can create, not that a file was there.
	f, err := os.OpenFile(File(dir, nonce), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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
