package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Delete of a container directory whose record is missing or unreadable:
// the backend's word decides whether a container may still run there.
func TestDeleteWithoutRecord(t *testing.T) {
	tests := []struct {
		name       string
		lose       func(path string) error
		backendHas bool
		force      bool
		wantErr    string // "" for success
		wantGone   bool   // the state directory is removed
		wantDown   bool   // the backend's container was torn down
	}{
		{"missing, no backend container", os.Remove, false, false, "does not exist", true, false},
		{"missing, no backend container, force", os.Remove, false, true, "", true, false},
		{"missing, backend container", os.Remove, true, false, "delete --force kills", false, false},
		{"missing, backend container, force", os.Remove, true, true, "", true, true},
		{"unreadable, no backend container", garble, false, false, "vetto.json", false, false},
		{"unreadable, no backend container, force", garble, false, true, "vetto.json", false, false},
		{"unreadable, backend container", garble, true, false, "delete --force kills", false, false},
		{"unreadable, backend container, force", garble, true, true, "", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}}
			r := newTestRuntime(t, b, fakeNamespaces{})
			if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}); err != nil {
				t.Fatal(err)
			}
			if err := r.Start("c1"); err != nil {
				t.Fatal(err)
			}
			if !tt.backendHas {
				delete(b.containers, "c1")
			}
			if err := tt.lose(filepath.Join(r.Store.dir("c1"), recordFile)); err != nil {
				t.Fatal(err)
			}
			err := r.Delete("c1", tt.force)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Delete = %v, want success", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Delete = %v, want an error with %q", err, tt.wantErr)
			}
			if tt.wantErr == "delete --force kills" && errors.Is(err, ErrNotExist) {
				t.Errorf("Delete = %v: reads as not existing to a caller that matches on it", err)
			}
			_, statErr := os.Stat(r.Store.dir("c1"))
			if gone := errors.Is(statErr, os.ErrNotExist); gone != tt.wantGone {
				t.Errorf("state directory gone = %v, want %v", gone, tt.wantGone)
			}
			down := len(b.destroyed) == 1
			if down != tt.wantDown {
				t.Errorf("backend container torn down = %v (destroyed %v), want %v", down, b.destroyed, tt.wantDown)
			}
		})
	}
}

func garble(path string) error { return os.WriteFile(path, []byte("{\"id\": tor"), 0o600) }
