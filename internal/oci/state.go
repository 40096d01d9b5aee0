package oci

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	// OCIVersion is the runtime-spec version of the state.
	OCIVersion string `json:"ociVersion,omitempty"`
	// ID is the container's ID.
	ID string `json:"id,omitempty"`
	// Status is the runtime's status of the container ("creating", …).
	Status string `json:"status,omitempty"`
	// PID is the container's process; 0 when the runtime gives none.
	PID int `json:"pid,omitempty"`
	// Bundle is the bundle directory (runtime-spec, runc 17.06 and later).
	Bundle string `json:"bundle,omitempty"`
	// BundlePath is the bundle directory as runc before 17.06 named it.
	BundlePath string `json:"bundlePath,omitempty"`
	// Root is crun's extra field: the container's root filesystem.
	// Empty under runc.
	Root string `json:"root,omitempty"`
	// Annotations are the container's annotations.
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
	data, err := ReadLimited(r, MaxStateSize)
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

// ReadLimited reads r to its end, at most limit bytes; more is an error
// matching [ErrTooLarge].
func ReadLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("more than %d bytes: %w", limit, ErrTooLarge)
	}
	return data, nil
}

// ReadFile reads the file name, at most limit bytes; more is an error
// matching [ErrTooLarge]. Errors name the file.
func ReadFile(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := ReadLimited(f, limit)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return data, nil
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
