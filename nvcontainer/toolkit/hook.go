package toolkit

import (
	"context"
	"fmt"
	"io"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// ContainerFor returns the container a hook's state and spec describe: the
// state's PID and its root filesystem — crun's state "root" when set (the
// NVIDIA Container Toolkit's order: crun reports the root it resolved),
// else the spec's root.path, joined to the bundle directory when relative.
// A rootfs that is missing or "/" is an error matching [nvcontainer.ErrInvalidRootfs].
func ContainerFor(st *request.State, spec *specs.Spec) (nvcontainer.Container, error) {
	rootfs, err := oci.Rootfs((*oci.State)(st), spec)
	if err != nil {
		return nvcontainer.Container{}, err
	}
	return nvcontainer.Container{PID: st.PID, Rootfs: rootfs}, nil
}

// RequestFromHook does what nvidia-container-runtime-hook prestart does
// before it executes nvidia-container-cli: it reads the OCI state from
// stdin, loads the bundle's config.json, and builds the request and the
// container from them. cfg nil means [DefaultConfig]. ctx bounds the read
// of stdin (see [request.ReadState]).
func RequestFromHook(ctx context.Context, stdin io.Reader, cfg *Config) (*request.Request, nvcontainer.Container, error) {
	st, err := request.ReadState(ctx, stdin)
	if err != nil {
		return nil, nvcontainer.Container{}, err
	}
	spec, err := request.LoadSpec(st.BundleDir())
	if err != nil {
		return nil, nvcontainer.Container{}, err
	}
	ctr, err := ContainerFor(st, spec)
	if err != nil {
		return nil, nvcontainer.Container{}, err
	}
	if cfg == nil {
		cfg = DefaultConfig()
	}
	req, err := request.FromSpec(spec, cfg.RequestOptions())
	if err != nil {
		return nil, nvcontainer.Container{}, fmt.Errorf("building the request of bundle %s: %w", st.BundleDir(), err)
	}
	return req, ctr, nil
}
