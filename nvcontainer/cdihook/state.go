package cdihook

import (
	"context"
	"fmt"
	"io"

	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/internal/sentinel"
)

// MaxStateSize bounds the OCI state [ContainerRoot] reads, far above a
// real one.
const MaxStateSize = 1 << 20

// ErrInvalidRootfs is matched when the state and the spec give no usable
// root filesystem (none, or "/"). It is nvcontainer.ErrInvalidRootfs.
var ErrInvalidRootfs = sentinel.ErrInvalidRootfs

// ContainerRoot reads the OCI state a runtime writes to a hook's stdin
// (at most [MaxStateSize] bytes) and returns the container's root
// filesystem: crun's "root" field when set, else root.path of the
// bundle's config.json, joined to the bundle directory when relative.
// A missing root or one that is "/" is an error matching
// [ErrInvalidRootfs]. When ctx is done before
// state is read, ContainerRoot returns ctx's error (context.Cause) and
// leaves the read to end with state: close state to end it sooner.
// ContainerRoot does not read state to its end when it holds more than
// a state: a hook whose runtime writes into a pipe should drain it.
func ContainerRoot(ctx context.Context, state io.Reader) (string, error) {
	data, err := oci.ReadContext(ctx, state, MaxStateSize)
	if err != nil {
		return "", fmt.Errorf("reading OCI state: %w", err)
	}
	st, err := oci.ParseState(data)
	if err != nil {
		return "", err
	}
	return oci.LoadRootfs(st)
}
