package nvcontainer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// Size limits for what a hook reads. Both are far above real documents.
const (
	// MaxStateSize bounds the OCI state read from a hook's stdin.
	MaxStateSize = 1 << 20
	// MaxSpecSize bounds a bundle's config.json.
	MaxSpecSize = 16 << 20
)

// ErrTooLarge is matched (with errors.Is) when input exceeds its limit.
var ErrTooLarge = errors.New("input too large")

// State is the OCI container state a runtime writes to a hook's stdin.
type State struct {
	OCIVersion string `json:"ociVersion,omitempty"`
	ID         string `json:"id,omitempty"`
	Status     string `json:"status,omitempty"`
	// PID is the container's process; 0 when the runtime gives none.
	PID int `json:"pid,omitempty"`
	// Bundle is the bundle directory (runtime-spec, runc 17.06 and later).
	Bundle string `json:"bundle,omitempty"`
	// BundlePath is the bundle directory as runc before 17.06 named it.
	BundlePath string `json:"bundlePath,omitempty"`
	// Root is crun's extra field: the container's root filesystem.
	Root        string            `json:"root,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// BundleDir returns Bundle, or BundlePath when Bundle is empty.
func (s *State) BundleDir() string {
	if s.Bundle != "" {
		return s.Bundle
	}
	return s.BundlePath
}

// ReadState reads and parses the OCI state from r (a hook's stdin), reading
// at most MaxStateSize bytes.
func ReadState(r io.Reader) (*State, error) {
	data, err := readLimited(r, MaxStateSize)
	if err != nil {
		return nil, fmt.Errorf("reading OCI state: %w", err)
	}
	return ParseState(data)
}

// ParseState parses an OCI state document: one JSON object with a bundle
// (or bundlePath) and a pid that is not negative. The error quotes the
// start of the input and, for a syntax error, gives the offset.
func ParseState(data []byte) (*State, error) {
	var st State
	if err := decodeJSON(data, &st); err != nil {
		return nil, fmt.Errorf("parsing OCI state %s: %w", excerpt(data), err)
	}
	switch {
	case st.BundleDir() == "":
		return nil, fmt.Errorf("parsing OCI state %s: no \"bundle\" or \"bundlePath\"", excerpt(data))
	case st.PID < 0:
		return nil, fmt.Errorf("parsing OCI state %s: negative pid %d", excerpt(data), st.PID)
	}
	return &st, nil
}

// decodeJSON unmarshals exactly one JSON value (an object) into v.
func decodeJSON(data []byte, v any) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return errors.New("not a JSON object")
	}
	if err := json.Unmarshal(data, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("at offset %d: %w", se.Offset, err)
		}
		return err
	}
	return nil
}

// excerpt quotes at most the first 64 bytes of data for an error message.
func excerpt(data []byte) string {
	const n = 64
	if len(data) <= n {
		return fmt.Sprintf("%q", data)
	}
	return fmt.Sprintf("%q... (%d bytes)", data[:n], len(data))
}

func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("more than %d bytes: %w", limit, ErrTooLarge)
	}
	return data, nil
}

// LoadSpec reads <bundle>/config.json, at most MaxSpecSize bytes, and
// parses it with [ParseSpec].
func LoadSpec(bundle string) (*specs.Spec, error) {
	p := path.Join(bundle, "config.json")
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("loading OCI spec: %w", err)
	}
	defer f.Close()
	data, err := readLimited(f, MaxSpecSize)
	if err != nil {
		return nil, fmt.Errorf("loading OCI spec %s: %w", p, err)
	}
	spec, err := ParseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("loading OCI spec %s: %w", p, err)
	}
	return spec, nil
}

// ContainerFor returns the container a hook's state and spec describe: the
// state's PID, and the spec's root.path (crun's state "root" when that is
// empty), joined to the bundle directory when relative.
func ContainerFor(st *State, spec *specs.Spec) (Container, error) {
	rootfs := ""
	if spec != nil && spec.Root != nil {
		rootfs = spec.Root.Path
	}
	if rootfs == "" {
		rootfs = st.Root
	}
	if rootfs == "" {
		return Container{}, fmt.Errorf("finding the rootfs of bundle %s: no root.path in the spec", st.BundleDir())
	}
	if !path.IsAbs(rootfs) {
		rootfs = path.Join(st.BundleDir(), rootfs)
	}
	return Container{PID: st.PID, Rootfs: path.Clean(rootfs)}, nil
}

// RequestFromHook does what nvidia-container-runtime-hook prestart does
// before it executes nvidia-container-cli: it reads the OCI state from
// stdin, loads the bundle's config.json, and builds the request and the
// container from them. cfg nil means [DefaultConfig].
func RequestFromHook(stdin io.Reader, cfg *Config) (*Request, Container, error) {
	st, err := ReadState(stdin)
	if err != nil {
		return nil, Container{}, err
	}
	spec, err := LoadSpec(st.BundleDir())
	if err != nil {
		return nil, Container{}, err
	}
	ctr, err := ContainerFor(st, spec)
	if err != nil {
		return nil, Container{}, err
	}
	req, err := RequestFromSpec(spec, cfg)
	if err != nil {
		return nil, Container{}, fmt.Errorf("building the request of bundle %s: %w", st.BundleDir(), err)
	}
	return req, ctr, nil
}
