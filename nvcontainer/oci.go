package nvcontainer

import (
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

// ErrTooLarge is matched (with errors.Is) when input exceeds its limit.
var ErrTooLarge = oci.ErrTooLarge

// ErrInvalidRootfs is matched when a container's root filesystem is
// unusable: by [ContainerFor] and [RequestFromHook] when neither the state
// nor the spec gives one (or it is "/"), and by [CLIContainer].
var ErrInvalidRootfs = oci.ErrInvalidRootfs

// State is the OCI container state a runtime writes to a hook's stdin:
// ociVersion, id, status, pid, bundle (or runc's older bundlePath), crun's
// extra root field and the annotations. Its BundleDir method returns
// Bundle, or BundlePath when Bundle is empty.
type State = oci.State

// ReadState reads and parses the OCI state from r (a hook's stdin), reading
// at most MaxStateSize bytes.
func ReadState(r io.Reader) (*State, error) { return oci.ReadState(r) }

// ParseState parses an OCI state document: one JSON object with a bundle
// (or bundlePath) and a pid that is not negative. The error quotes the
// start of the input and, for a syntax error, gives the offset.
func ParseState(data []byte) (*State, error) { return oci.ParseState(data) }

// LoadSpec reads <bundle>/config.json, at most MaxSpecSize bytes, and
// parses it with [ParseSpec].
func LoadSpec(bundle string) (*specs.Spec, error) { return oci.LoadSpec(bundle) }

// ParseSpec parses an OCI runtime spec (config.json) as the runtime hook
// does: ociVersion, process and root must be present. A process
// capabilities given as a flat list (runtime-spec 1.0.0-rc1 to rc4) is read
// as the bounding, effective and permitted sets.
func ParseSpec(data []byte) (*specs.Spec, error) { return oci.ParseSpec(data) }

// ContainerFor returns the container a hook's state and spec describe: the
// state's PID and its root filesystem — crun's state "root" when set (the
// NVIDIA Container Toolkit's order: crun reports the root it resolved),
// else the spec's root.path, joined to the bundle directory when relative.
// A rootfs that is missing or "/" is an error matching [ErrInvalidRootfs].
func ContainerFor(st *State, spec *specs.Spec) (Container, error) {
	rootfs, err := oci.Rootfs(st, spec)
	if err != nil {
		return Container{}, err
	}
	return Container{PID: st.PID, Rootfs: rootfs}, nil
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
