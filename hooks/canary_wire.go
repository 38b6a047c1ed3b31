package hooks

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"time"
)

// MaxCanaryRead bounds what the probe reads of a masked path (and what the
// host hashes of the file under it): enough to recognise the content,
// never a whole /proc/kcore.
const MaxCanaryRead = 4096

// ProbeTimeout bounds the canaries: the attempts, and a probe process
// where one runs them (darwin, windows). Each connect attempt gives up
// sooner (probeDialTimeout), so a run that reaches this was stuck.
const ProbeTimeout = 10 * time.Second

const probeDialTimeout = 500 * time.Millisecond

// ProbeConfig is what the host asks the canaries to try, with the nonce
// and the address it prepared. It reaches the process on an inherited
// socket (the exec shim's) or on stdin (a probe process): never in argv or
// the environment, which the workload can read.
type ProbeConfig struct {
	Nonce        string   `json:"nonce"`
	MaskedRead   []string `json:"maskedRead,omitempty"`
	WriteOutside []string `json:"writeOutside,omitempty"`
	WriteInside  []string `json:"writeInside,omitempty"`
	Connect      string   `json:"connect,omitempty"`
}

// ProbeReport is what the probe says it saw. It is the container's word:
// the verdicts use it only to know an attempt was made and, for a masked
// read, which bytes came back — which the host compares with the file it
// holds.
type ProbeReport struct {
	Reads   []ProbeAttempt `json:"reads,omitempty"`
	Writes  []ProbeAttempt `json:"writes,omitempty"`
	Connect *ProbeAttempt  `json:"connect,omitempty"`
}

// ProbeAttempt is one operation the probe tried.
type ProbeAttempt struct {
	Path string `json:"path"`
	Err  string `json:"err,omitempty"`
	// Size and SHA256 describe what a read returned.
	Size   int    `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

func (r ProbeReport) attempt(list []ProbeAttempt, p string) (ProbeAttempt, bool) {
	for _, a := range list {
		if a.Path == p {
			return a, true
		}
	}
	return ProbeAttempt{}, false
}

// CanaryFile is the container path the probe creates under dir.
func CanaryFile(dir, nonce string) string { return path.Join(dir, canaryPrefix+nonce) }

// Digest is how the probe and the host fingerprint what they read.
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
	// VerdictExec lets the shim exec the program.
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
