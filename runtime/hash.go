package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// frozenSpec is the effective spec serialised once: data is what is
// stored and handed on, hash is sha256 over its RFC 8785 canonical form.
type frozenSpec struct {
	spec *specs.Spec
	data []byte
	hash string
}

// freeze serialises s and hashes its canonical JSON. The canonical form
// makes the hash independent of key order and number formatting, so the
// same spec always has the same identity wherever it is recomputed.
func freeze(s *specs.Spec) (*frozenSpec, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode effective spec: %w", err)
	}
	h, err := specHash(data)
	if err != nil {
		return nil, err
	}
	return &frozenSpec{spec: s, data: data, hash: h}, nil
}

func specHash(data []byte) (string, error) {
	canon, err := jcs.Transform(data)
	if err != nil {
		return "", fmt.Errorf("canonicalise effective spec: %w", err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// shortHash is the 12-hex form printed on the launch line.
func shortHash(h string) string {
	if len(h) < 12 {
		return h
	}
	return h[:12]
}
