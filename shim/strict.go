package shim

import (
	"bytes"
	"encoding/json"
	"errors"
)

func strictUnmarshal(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	// Not d.More: it calls a stray '}' or ']' the end of the input.
	if len(bytes.Trim(data[d.InputOffset():], " \t\n\r")) > 0 {
		return errors.New("trailing data")
	}
	return nil
}
