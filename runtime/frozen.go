package runtime

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// freezeSpecLocked stores the frozen spec's bytes in the container's
// directory: start and delete run the hooks that create saw, whatever
// happens to the bundle meanwhile, and start re-hashes them to prove they
// are still what was verified.
func (s Store) freezeSpecLocked(id string, f *frozenSpec) error {
	if err := writeFileAtomic(filepath.Join(s.dir(id), specFileName), f.data, 0o600); err != nil {
		return err
	}
	// And outside the state directory: rewriting config.json and
	// vetto.json together does not get past start.
	if err := s.Evidence.recordFrozen(s.Root, id, f.hash); err != nil {
		return fmt.Errorf("record the frozen hash of %q: %w", id, err)
	}
	return nil
}

// readSpec loads the stored frozen spec and checks it against the hash
// recorded at create; any difference is ErrSpecMismatch.
func (s Store) readSpec(rec *Record) (*specs.Spec, error) {
	data, err := readNoFollow(filepath.Join(s.dir(rec.ID), specFileName))
	if err != nil {
		return nil, fmt.Errorf("read effective spec of %q: %w", rec.ID, err)
	}
	if rec.SpecHash != "" {
		h, err := specHash(data)
		if err != nil {
			return nil, Errorf(ErrSpecMismatch, "effective spec of %q: %w", rec.ID, err)
		}
		if h != rec.SpecHash {
			return nil, Errorf(ErrSpecMismatch, "effective spec of %q changed after create: sha256 %s, frozen %s", rec.ID, shortHash(h), shortHash(rec.SpecHash))
		}
		if err := s.Evidence.checkFrozen(s.Root, rec.ID, h); err != nil {
			return nil, err
		}
	}
	var sp specs.Spec
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("read effective spec of %q: %w", rec.ID, err)
	}
	return &sp, nil
}
