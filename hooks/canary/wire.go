// Package canary is the container's side of the canaries (P3 of the
// post-launch verification, docs/verification.md): the messages the host
// and the container's process say to each other, and the attempts that
// process makes in the domain its program will run in. The host's side —
// the plan derived from the spec, the session and the verdicts — is in
// hooks/.
//
// It is apart from hooks/ because the container's init imports it (the
// pre-exec step, linux/containerinit): a leaf with no policy, spec or TOML
// code, so that the init executable stays small and starts quickly.
package canary

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"time"
)

// MaxRead bounds what the process reads of a masked path (and what the
// host hashes of the file under it): enough to recognise the content,
// never a whole /proc/kcore.
const MaxRead = 4096

// Timeout bounds the canaries: the attempts, and a probe process where one
// runs them (darwin, windows). Each connect attempt gives up sooner
// (dialTimeout), so a run that reaches this was stuck.
const Timeout = 10 * time.Second

const dialTimeout = 500 * time.Millisecond

// FilePrefix names the files the process creates; the nonce makes each
// run's unguessable, so an old or planted file cannot pass for a new one.
const FilePrefix = ".vetto-canary-"

// Config is what the host asks the canaries to try, with the nonce and the
// address it prepared. It reaches the process on an inherited socket (the
// init's pre-exec step) or on stdin (a probe process): never in argv or
// the environment, which the workload can read.
type Config struct {
	Nonce        string   `json:"nonce"`
	MaskedRead   []string `json:"maskedRead,omitempty"`
	WriteOutside []string `json:"writeOutside,omitempty"`
	WriteInside  []string `json:"writeInside,omitempty"`
	Connect      string   `json:"connect,omitempty"`
}

// Report is what the process says it saw. It is the container's word: the
// verdicts use it only to know an attempt was made and, for a masked read,
// which bytes came back — which the host compares with the file it holds.
type Report struct {
	Reads   []Attempt `json:"reads,omitempty"`
	Writes  []Attempt `json:"writes,omitempty"`
	Connect *Attempt  `json:"connect,omitempty"`
}

// Attempt is one operation the process tried.
type Attempt struct {
	Path string `json:"path"`
	Err  string `json:"err,omitempty"`
	// Size and SHA256 describe what a read returned.
	Size   int    `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Find is the attempt on p in list, and whether there is one.
func Find(list []Attempt, p string) (Attempt, bool) {
	for _, a := range list {
		if a.Path == p {
			return a, true
		}
	}
	return Attempt{}, false
}

// File is the container path the process creates under dir.
func File(dir, nonce string) string { return path.Join(dir, FilePrefix+nonce) }

// Digest is how the process and the host fingerprint what they read.
func Digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Messages on the canary channel are a 4-byte big-endian length and that
// many bytes of JSON, at most maxMessage: a process that writes more is
// not heard further.
const maxMessage = 64 << 10

// The host's answer once it has judged the report.
const (
	// VerdictExec lets the init exec the program.
	VerdictExec = "exec"
	// VerdictAbort makes it exit without running it.
	VerdictAbort = "abort"
)

// EncodeMessage is v as one message.
func EncodeMessage(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(data) > maxMessage {
		return nil, fmt.Errorf("canary message of %d bytes exceeds %d", len(data), maxMessage)
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	return append(n[:], data...), nil
}

// WriteMessage sends v as one message.
func WriteMessage(w io.Writer, v any) error {
	b, err := EncodeMessage(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ReadMessage reads one message into v, refusing one over maxMessage. It
// reads exactly the message's bytes, so the next message on the same
// connection is left for the next call.
func ReadMessage(r io.Reader, v any) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return fmt.Errorf("read canary message: %w", err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxMessage {
		return fmt.Errorf("canary message of %d bytes exceeds %d", size, maxMessage)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return fmt.Errorf("read canary message: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("canary message: %w", err)
	}
	return nil
}

// WarmCodecs builds encoding/json's caches for the messages both sides
// exchange — the plan, the report, the verdict — and brings the code that
// encodes and decodes them into memory. The exchange is on the path of
// every launch with canaries: the host waits for the report, the init for
// the plan and the verdict. The first encode or decode of a type in a
// process builds its cache (and, in the init, a fresh process, faults in
// the codec's code): about a tenth of a millisecond in the init each way
// on the 2-CPU test host. The init calls this while it waits for the
// host's connection, the runtime beside its start-up; the values are zero
// and the results thrown away.
func WarmCodecs() {
	plan, _ := EncodeMessage(Config{MaskedRead: []string{""}, WriteInside: []string{""}})
	report, _ := EncodeMessage(Report{Reads: []Attempt{{}}, Writes: []Attempt{{}}, Connect: &Attempt{}})
	verdict, _ := EncodeMessage(VerdictExec)
	var cfg Config
	var rep Report
	var v string
	_ = ReadMessage(bytes.NewReader(plan), &cfg)
	_ = ReadMessage(bytes.NewReader(report), &rep)
	_ = ReadMessage(bytes.NewReader(verdict), &v)
}
