package toolkit_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// crun's state root comes first, as in the toolkit's hooks; root.path is
// used when the state has none (runc).
func TestContainerFor(t *testing.T) {
	tests := []struct {
		name     string
		crunRoot string
		root     *specs.Root
		want     string
	}{
		{"crun's root wins", "/crun/rootfs", &specs.Root{Path: "rootfs"}, "/crun/rootfs"},
		{"crun's root is cleaned", "/crun/rootfs/", &specs.Root{}, "/crun/rootfs"},
		{"relative root.path joins the bundle", "", &specs.Root{Path: "rootfs"}, "/run/b/rootfs"},
		{"absolute root.path stays", "", &specs.Root{Path: "/abs/rootfs/"}, "/abs/rootfs"},
		{"root.path is cleaned", "", &specs.Root{Path: "../other"}, "/run/other"},
		{"root.path is cleaned inside", "", &specs.Root{Path: "./rootfs//x/.."}, "/run/b/rootfs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &request.State{Bundle: "/run/b", PID: 9, Root: tt.crunRoot}
			ctr, err := toolkit.ContainerFor(st, &specs.Spec{Root: tt.root})
			require.NoError(t, err)
			assert.Equal(t, nvcontainer.Container{PID: 9, Rootfs: tt.want}, ctr)
		})
	}
	for name, st := range map[string]*request.State{"no rootfs": {Bundle: "/b"}, "rootfs /": {Bundle: "/b", Root: "/"}} {
		t.Run(name, func(t *testing.T) {
			_, err := toolkit.ContainerFor(st, &specs.Spec{Root: &specs.Root{}})
			assert.ErrorIs(t, err, nvcontainer.ErrInvalidRootfs, "state %+v", st)
		})
	}
}

func TestRequestFromHook(t *testing.T) {
	bundle := testutil.Bundle(t, `{"ociVersion":"1.0.2","root":{"path":"rootfs"},
		"process":{"env":["NVIDIA_VISIBLE_DEVICES=0,1","NVIDIA_MIG_CONFIG_DEVICES=all","NVIDIA_DRIVER_CAPABILITIES=utility"],
		"capabilities":{"bounding":["CAP_SYS_ADMIN"]}}}`)
	state := `{"ociVersion":"1.0.2","id":"x","pid":1234,"bundle":"` + bundle + `"}`
	req, ctr, err := toolkit.RequestFromHook(context.Background(), strings.NewReader(state), nil)
	require.NoError(t, err)
	assert.Equal(t, nvcontainer.Container{PID: 1234, Rootfs: filepath.Join(bundle, "rootfs")}, ctr)
	assert.Equal(t, "0,1", req.Devices.String(), "request devices")
	assert.Equal(t, "all", req.MIGConfig, "request MIG config")
	assert.Equal(t, "utility", req.Capabilities.String(), "request capabilities")

	t.Run("under crun the state's root is the container's", func(t *testing.T) {
		crun := `{"ociVersion":"1.0.2","pid":0,"bundle":"` + bundle + `","root":"/var/lib/crun/merged"}`
		_, ctr, err := toolkit.RequestFromHook(context.Background(), strings.NewReader(crun), nil)
		require.NoError(t, err)
		assert.Equal(t, "/var/lib/crun/merged", ctr.Rootfs)
	})

	t.Run("unprivileged: the MIG request is refused, naming the bundle", func(t *testing.T) {
		bundle := testutil.Bundle(t, `{"ociVersion":"1.0.2","root":{"path":"/r"},"process":{"env":["NVIDIA_VISIBLE_DEVICES=0","NVIDIA_MIG_CONFIG_DEVICES=all"]}}`)
		_, _, err := toolkit.RequestFromHook(context.Background(), strings.NewReader(`{"bundle":"`+bundle+`"}`), nil)
		assert.ErrorIs(t, err, request.ErrUnprivileged)
		assert.ErrorContains(t, err, bundle)
	})

	t.Run("a missing config.json names the path", func(t *testing.T) {
		_, _, err := toolkit.RequestFromHook(context.Background(), strings.NewReader(`{"bundle":"/nonexistent/b"}`), nil)
		assert.ErrorContains(t, err, "/nonexistent/b/config.json")
	})
}
