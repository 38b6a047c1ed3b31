//go:build darwin

package darwin

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"slices"
	"sync"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
)

// readFacts reads, from the host, what the kernel says of pid: its
// identity and group (kern.proc.pid) and its sandbox's answers to qs
// (sandbox_check). Nothing is asked of the process itself.
func readFacts(pid int, qs []Query) Facts {
	f := Facts{Pid: pid}
	p, err := procInfo(pid)
	switch {
	case err != nil:
		f.StartErr, f.PgidErr = err.Error(), err.Error()
	case p.zombie:
		f.Start, f.StartErr, f.PgidErr = p.start, "exited", "exited"
	default:
		f.Start, f.Pgid = p.start, p.pgid
	}
	if in, err := sandboxed(pid); err != nil {
		f.SandboxedErr = err.Error()
	} else {
		f.Sandboxed = in
	}
	for _, q := range qs {
		ok, err := sandboxAllows(pid, q.Op, q.Path)
		a := Answer{Allowed: ok}
		if err != nil {
			a.Err = err.Error()
		}
		f.Answers = append(f.Answers, a)
	}
	return f
}

// canaries runs the probe in the container's profile and judges it from
// the host: the canary files as the host sees them (a darwin container's
// paths are host paths), its own loopback listener, the kernel's answers
// for the workload, the bytes under each masked path.
func (c *container) canaries() []hooks.Result {
	cp := c.st.Plan.CanaryPlan()
	if cp.Empty() {
		return nil
	}
	var o Observation
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		o.Common.ProbeErr, o.Common.ListenerErr = err.Error(), err.Error()
		o.Common.FactErr = []string{err.Error()}
		return JudgeCanaries(cp, o)
	}
	nonce := hex.EncodeToString(b)
	o.Common.Nonce = nonce
	cfg := canary.Config{Nonce: nonce, MaskedRead: cp.MaskedRead, WriteOutside: cp.WriteOutside, WriteInside: cp.WriteInside}

	lis, err := net.Listen("tcp4", "127.0.0.1:0")
	var accepted int
	var wg sync.WaitGroup
	if err != nil {
		o.Common.ListenerErr = err.Error()
	} else {
		cfg.Connect = lis.Addr().String()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				conn, err := lis.Accept()
				if err != nil {
					return
				}
				accepted++
				conn.Close()
			}
		}()
	}
	// The plan goes on the probe's stdin: argv is readable by the
	// workload beside it, which could forge the canaries with the nonce.
	in, runErr := canary.EncodeMessage(cfg)
	var out []byte
	if runErr == nil {
		out, runErr = c.runProbe([]string{c.st.Self, canary.ProbeArg}, in, canary.Timeout)
	}
	if runErr == nil {
		runErr = canary.ReadMessage(bytes.NewReader(out), &o.Common.Report)
	}
	if runErr != nil {
		o.Common.ProbeErr = runErr.Error()
	}
	if lis != nil {
		lis.Close()
		wg.Wait()
		o.Common.Accepted = accepted
	}

	o.Common.Created = map[string]bool{}
	for _, dir := range slices.Concat(cp.WriteInside, cp.WriteOutside) {
		file := canary.File(dir, nonce)
		_, err := os.Lstat(file)
		switch {
		case err == nil:
			o.Common.Created[dir] = true
			if err := os.Remove(file); err != nil {
				o.Common.FactErr = append(o.Common.FactErr, err.Error())
			}
		case errors.Is(err, fs.ErrNotExist):
			o.Common.Created[dir] = false
		default:
			o.Common.FactErr = append(o.Common.FactErr, err.Error())
		}
	}
	o.Denied, o.HostDigest = map[string]Answer{}, map[string]string{}
	for _, m := range cp.MaskedRead {
		ok, err := sandboxAllows(c.st.Pid, "file-read-data", m)
		a := Answer{Allowed: ok}
		if err != nil {
			a.Err = err.Error()
		}
		o.Denied[m] = a
		if d, ok := hostDigest(m); ok {
			o.HostDigest[m] = d
		}
	}
	return JudgeCanaries(cp, o)
}

// hostDigest is what the host reads at p, as the probe would hash it.
func hostDigest(p string) (string, bool) {
	f, err := os.Open(p)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	buf := make([]byte, canary.MaxRead)
	n, err := io.ReadFull(f, buf)
	if n == 0 || err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", false
	}
	return canary.Digest(buf[:n]), true
}
