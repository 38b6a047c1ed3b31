package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// Credentials the sandbox may use but never read (docs/network.md,
// "Credentials"): the bundle names where each value is (spec.CredentialRef),
// create reads it here, on the host, just before the relay starts, and
// hands it to the relay over the relay's config pipe. The value is never
// written anywhere: not the state, the record, the frozen spec, an audit
// line or an error. Any failure refuses the launch (125).

// RelayCredential is one credential the relay adds: the header's whole
// value. It is a secret; String says where it came from, never what it is.
type RelayCredential struct {
	Host, Header string
	Value        string
	// Source is where it was read ("file /path", "env NAME").
	Source string
}

func (c RelayCredential) String() string {
	return fmt.Sprintf("%s for %s (from %s)", c.Header, c.Host, c.Source)
}

// GoString is String: %#v must not print the value either.
func (c RelayCredential) GoString() string { return c.String() }

// maxCredentialSize bounds a credential file: a token, not a document (a
// header line's whole budget in the relay is 16 KiB).
const maxCredentialSize = 8 << 10

// maxCABundle bounds the CA bundle the relay verifies upstreams with.
const maxCABundle = 4 << 20

// systemCABundles are where Linux distributions keep the system's roots
// (the list Go's crypto/x509 reads), first found wins. The relay cannot
// read files, so create reads the bundle for it.
var systemCABundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Gentoo, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL 6
	"/etc/ssl/ca-bundle.pem",                            // openSUSE
	"/etc/pki/tls/cacert.pem",                           // OpenELEC
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
	"/etc/ssl/cert.pem",                                 // Alpine
}

// DefaultCredentialDirs are where a credential file may be, without
// [relay] credential_dirs: the runtime user's own vetto configuration and
// the host's. A bundle names the file, and the runtime reads it with its
// own privileges, so a bundle from someone else must not be able to send
// any file the runtime can read (an SSH key) to a host it allows.
func DefaultCredentialDirs() []string {
	dirs := []string{"/etc/vetto/credentials"}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		dirs = append(dirs, filepath.Join(home, ".config", "vetto"))
	}
	return dirs
}

// credentialDirs is [relay] credential_dirs, else the defaults.
func (c *Config) credentialDirs() []string {
	if c != nil && len(c.Relay.CredentialDirs) > 0 {
		return c.Relay.CredentialDirs
	}
	return DefaultCredentialDirs()
}

// readCredentials reads every credential the bundle names. The error names
// the credential's host and its source, never a value, and is of kind
// ErrPreLaunchFailed: the sandbox cannot be established as asked.
func (r *Runtime) readCredentials(refs []spec.CredentialRef) ([]RelayCredential, error) {
	dirs := r.Config.credentialDirs()
	var out []RelayCredential
	for _, ref := range refs {
		var (
			secret string
			err    error
		)
		if ref.File != "" {
			secret, err = readCredentialFile(ref.File, dirs)
		} else {
			secret, err = readCredentialEnv(ref.Env)
		}
		if err == nil {
			err = checkHeaderValue(ref.Prefix + secret)
		}
		if err != nil {
			return nil, Errorf(ErrPreLaunchFailed, "credential for %s (%s): %w", ref.Host, ref.Source(), err)
		}
		out = append(out, RelayCredential{Host: ref.Host, Header: ref.Header, Value: ref.Prefix + secret, Source: ref.Source()})
	}
	return out, nil
}

func readCredentialEnv(name string) (string, error) {
	v, ok := os.LookupEnv(name)
	switch {
	case !ok:
		return "", errors.New("not set in the runtime's environment")
	case v == "":
		return "", errors.New("empty")
	case len(v) > maxCredentialSize:
		return "", fmt.Errorf("more than %d bytes", maxCredentialSize)
	}
	return v, nil
}

// checkHeaderValue refuses a value that cannot go in a header line as it
// is (a second line would be a header the workload's token chose); the
// message says what is wrong, never the value.
func checkHeaderValue(v string) error {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return fmt.Errorf("the value has a control character or a line break at byte %d", i)
		}
	}
	if strings.TrimSpace(v) != v {
		return errors.New("the value starts or ends with a space")
	}
	return nil
}

// readCABundle reads the roots the relay verifies credentials' upstreams
// with: [relay] ca_file, or the system's bundle.
func (r *Runtime) readCABundle() ([]byte, error) {
	paths := systemCABundles
	if f := r.Config.relay().CAFile; f != "" {
		paths = []string{f}
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) && len(paths) > 1 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("CA bundle: %w", err)
		}
		data, err := io.ReadAll(io.LimitReader(f, maxCABundle+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("CA bundle %s: %w", p, err)
		}
		if len(data) > maxCABundle {
			return nil, fmt.Errorf("CA bundle %s: larger than %d bytes", p, maxCABundle)
		}
		return data, nil
	}
	return nil, fmt.Errorf("CA bundle: none of %s exists (set [relay] ca_file in runtime.toml)", strings.Join(paths, ", "))
}
