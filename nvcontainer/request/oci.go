package request

import (
	"context"
	"fmt"
	"io"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/internal/oci"
)

// The OCI state and spec readers live in internal/oci, which the static
// (cgo-free) nvidia-cdi-hook shares; these are its exported face.

// Size limits for what a hook reads. Both are far above real documents.
const (
	// MaxStateSize bounds the OCI state read from a hook's stdin.
	MaxStateSize = oci.MaxStateSize
	// MaxSpecSize bounds a bundle's config.json.
	MaxSpecSize = oci.MaxSpecSize
)

// ErrTooLarge is matched (with errors.Is) when input exceeds its limit:
// an OCI state or spec past [MaxStateSize] or [MaxSpecSize], or a request
// past one of the bounds [MaxDevices], [MaxIMEXChannels], [MaxEnvValue],
// [MaxEnvSize], and [MaxRequirements] for NVIDIA_REQUIRE_*.
var ErrTooLarge = oci.ErrTooLarge

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
func (s *State) BundleDir() string { return (*oci.State)(s).BundleDir() }

// ReadState reads and parses the OCI state from r (a hook's stdin), reading
// at most MaxStateSize bytes. When ctx is done first, ReadState returns its
// error (context.Cause) and leaves the read to end with r: close r to end
// it sooner.
func ReadState(ctx context.Context, r io.Reader) (*State, error) {
	data, err := oci.ReadContext(ctx, r, MaxStateSize)
	if err != nil {
		return nil, fmt.Errorf("reading OCI state: %w", err)
	}
	return ParseState(data)
}

// ParseState parses an OCI state document: one JSON object with a bundle
// (or bundlePath) and a pid that is not negative. The error quotes the
// start of the input and, for a syntax error, gives the offset.
func ParseState(data []byte) (*State, error) {
	st, err := oci.ParseState(data)
	if err != nil {
		return nil, err
	}
	return (*State)(st), nil
}

// LoadSpec reads <bundle>/config.json, at most MaxSpecSize bytes, and
// parses it with [ParseSpec].
func LoadSpec(bundle string) (*specs.Spec, error) { return oci.LoadSpec(bundle) }

// ParseSpec parses an OCI runtime spec (config.json) as the runtime hook
// does: ociVersion, process and root must be present. A process
// capabilities given as a flat list (runtime-spec 1.0.0-rc1 to rc4) is read
// as the bounding, effective and permitted sets.
func ParseSpec(data []byte) (*specs.Spec, error) { return oci.ParseSpec(data) }
