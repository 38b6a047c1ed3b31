package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// specFile is the effective spec as stored in the container's directory:
// the one object the backend was handed, kept so that start and delete run
// the hooks that create saw, whatever happens to the bundle meanwhile.
type specFile struct {
	spec *specs.Spec
}

func (s Store) freezeSpecLocked(id string, sp *specs.Spec) (*specFile, error) {
	data, err := json.Marshal(sp)
	if err != nil {
		return nil, fmt.Errorf("encode effective spec: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(s.dir(id), specFileName), data, 0o600); err != nil {
		return nil, err
	}
	return &specFile{spec: sp}, nil
}

func (s Store) readSpec(id string) (*specs.Spec, error) {
	data, err := os.ReadFile(filepath.Join(s.dir(id), specFileName))
	if err != nil {
		return nil, fmt.Errorf("read effective spec of %q: %w", id, err)
	}
	var sp specs.Spec
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("read effective spec of %q: %w", id, err)
	}
	return &sp, nil
}
