//go:build !urfave_cli_no_docs

package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// man is where `make man` has TestManPage write the page; empty, the test
// only checks it. The binary is built with urfave_cli_no_docs, so the
// generator is linked only into this test, never into vetto-runtime.
var man = flag.String("man", "", "write vetto-runtime.8 into this directory")

// The man page is the CLI's own help, every command in it.
func TestManPage(t *testing.T) {
	app := NewApp("0.1.0-dev", "")
	page, err := app.ToMan()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range app.Commands {
		if !c.Hidden && !strings.Contains(page, c.Name) {
			t.Errorf("the man page does not mention %q", c.Name)
		}
	}
	if *man == "" {
		return
	}
	if err := os.MkdirAll(*man, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*man, "vetto-runtime.8"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
}
