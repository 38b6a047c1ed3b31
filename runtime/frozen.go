package runtime

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"

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
	s.frozen.keep(id, f)
	return nil
}

// frozenMemo holds the frozen specs this process wrote, by container: the
// start, monitor round and teardown of the same `run` take the bytes that
// create verified instead of reading, hashing and checking them back from
// disk (docs/architecture.md, "One command, one transaction"). A command
// in another process has none and reads the file, where a rewrite shows.
type frozenMemo struct {
	mu   sync.Mutex
	byID map[string]*frozenSpec
}

func (m *frozenMemo) keep(id string, f *frozenSpec) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string]*frozenSpec{}
	}
	m.byID[id] = f
}

// bytes are the frozen spec of id this process wrote, if its hash is the
// one the record names; nil otherwise.
func (m *frozenMemo) bytes(id, hash string) []byte {
	if m == nil || hash == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.byID[id]; f != nil && f.hash == hash {
		return f.data
	}
	return nil
}

func (m *frozenMemo) forget(id string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byID, id)
}

// readSpec loads the stored frozen spec and checks it against the hash
// recorded at create; any difference is ErrSpecMismatch.
//
// Each call returns a spec of its own (callers adjust it, as
// withCurrentLimits does): within the process that froze it, parsed again
// from the bytes it wrote.
func (s Store) readSpec(rec *Record) (*specs.Spec, error) {
	if data := s.frozen.bytes(rec.ID, rec.SpecHash); data != nil {
		return unmarshalSpec(rec.ID, data)
	}
	if rec.lost && rec.SpecHash == "" {
		return nil, Errorf(ErrSpecMismatch, "effective spec of %q: its record is lost and no frozen hash is left to check it against", rec.ID)
	}
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
	return unmarshalSpec(rec.ID, data)
}

func unmarshalSpec(id string, data []byte) (*specs.Spec, error) {
	var sp specs.Spec
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("read effective spec of %q: %w", id, err)
	}
	return &sp, nil
}
