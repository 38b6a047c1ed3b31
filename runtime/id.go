package runtime

import "fmt"

// ValidateID accepts the ids runc accepts: non-empty, ASCII letters, digits,
// '_', '+', '-', '.', and not "." or "..". The id names a directory under
// --root, so anything else (a '/' above all) could escape it.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("container id cannot be empty: %w", ErrInvalidID)
	}
	if id == "." || id == ".." || len(id) > 1024 {
		return fmt.Errorf("%q: %w", id, ErrInvalidID)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '+', c == '-', c == '.':
		default:
			return fmt.Errorf("%q: %w", id, ErrInvalidID)
		}
	}
	return nil
}
