package cdispec_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	oci "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"tags.cncf.io/container-device-interface/pkg/cdi"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// videoGID stands for the host's video group.
const videoGID = 44

// restrictedHost is a DGX A100 with real device nodes, each made mode
// and group (root-owned), as a host whose driver params say
// DeviceFileMode=0660 DeviceFileGID=44.
func restrictedHost(t *testing.T, mode fs.FileMode, gid int) *testHost {
	t.Helper()
	testutil.RequireRoot(t)
	sim := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{RealNodes: true})
	require.NoError(t, filepath.WalkDir(sim.Roots.Dev, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeCharDevice == 0 {
			return err
		}
		if err := os.Chown(p, 0, gid); err != nil {
			return err
		}
		return os.Chmod(p, mode)
	}))
	return openTestHost(t, sim, "")
}

// allNodes are the spec's device nodes, spec-wide and every device's.
func allNodes(spec *specs.Spec) []*specs.DeviceNode {
	nodes := spec.ContainerEdits.DeviceNodes
	for _, d := range spec.Devices {
		nodes = append(nodes, d.ContainerEdits.DeviceNodes...)
	}
	return nodes
}

// TestCDINodeAttrs checks that device nodes carry the host node's mode and
// group and "rwm", and that a node a non-root user could not open (0660
// root:video) puts its group in additionalGids, spec-wide and per device,
// which needs cdiVersion 0.7.0; with NoAdditionalGIDs, or on a host whose
// nodes are 0666 root:root, the spec stays at 0.5.0, which podman 4.3
// loads. A runtime applying the spec (the CDI module's injection) gives
// the process the group and the node its mode and group.
func TestCDINodeAttrs(t *testing.T) {
	caps := capabilities.Of(capabilities.Compute, capabilities.Utility)
	t.Run("0660 root:video", func(t *testing.T) {
		h := restrictedHost(t, 0o660, videoGID)
		spec, err := cdispec.FromHost(h.host, caps, nil)
		require.NoError(t, err)
		assert.Equal(t, "0.7.0", spec.Version)
		for _, n := range allNodes(spec) {
			require.NotNil(t, n.FileMode, "%s fileMode", n.Path)
			assert.Equal(t, fs.FileMode(0o660), *n.FileMode, "%s fileMode", n.Path)
			require.NotNil(t, n.GID, "%s gid", n.Path)
			assert.Equal(t, uint32(videoGID), *n.GID, "%s gid", n.Path)
			assert.Nil(t, n.UID, "%s uid: left to the runtime (the container user)", n.Path)
			assert.Equal(t, "rwm", n.Permissions, "%s permissions", n.Path)
		}
		assert.Equal(t, []uint32{videoGID}, spec.ContainerEdits.AdditionalGIDs, "spec-wide additionalGids")
		for _, d := range spec.Devices {
			assert.Equal(t, []uint32{videoGID}, d.ContainerEdits.AdditionalGIDs, "device %s additionalGids", d.Name)
		}
		checkInjected(t, spec, "0")

		spec, err = cdispec.FromHost(h.host, caps, &cdispec.Options{NoAdditionalGIDs: true})
		require.NoError(t, err)
		assert.Equal(t, cdispec.DefaultVersion, spec.Version, "NoAdditionalGIDs")
		assert.Empty(t, spec.ContainerEdits.AdditionalGIDs, "NoAdditionalGIDs")
	})
	t.Run("0666 root:root", func(t *testing.T) {
		h := restrictedHost(t, 0o666, 0)
		spec, err := cdispec.FromHost(h.host, caps, nil)
		require.NoError(t, err)
		assert.Equal(t, cdispec.DefaultVersion, spec.Version)
		assert.Empty(t, spec.ContainerEdits.AdditionalGIDs)
		for _, n := range allNodes(spec) {
			require.NotNil(t, n.FileMode, "%s fileMode", n.Path)
			assert.Equal(t, fs.FileMode(0o666), *n.FileMode, "%s fileMode", n.Path)
			assert.Nil(t, n.GID, "%s gid", n.Path)
		}
	})
	t.Run("0660 root:root", func(t *testing.T) {
		// Group root: nothing to add (a process in group 0 is root's).
		h := restrictedHost(t, 0o660, 0)
		spec, err := cdispec.FromHost(h.host, caps, nil)
		require.NoError(t, err)
		assert.Empty(t, spec.ContainerEdits.AdditionalGIDs)
	})
}

// checkInjected applies spec's device name to an OCI spec running as user
// 1000:1000, as a runtime does through the CDI module, and checks the
// process's groups and /dev/nvidia0's mode and group.
func checkInjected(t *testing.T, spec *specs.Spec, name string) {
	t.Helper()
	dir := t.TempDir()
	data, err := cdispec.Marshal(spec, cdispec.FormatJSON)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia.json"), data, 0o644))
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dir), cdi.WithAutoRefresh(false))
	require.NoError(t, err)
	ociSpec := &oci.Spec{Process: &oci.Process{User: oci.User{UID: 1000, GID: 1000}}, Linux: &oci.Linux{}}
	_, err = cache.InjectDevices(ociSpec, spec.Kind+"="+name)
	require.NoError(t, err, "injecting %s", name)
	assert.Contains(t, ociSpec.Process.User.AdditionalGids, uint32(videoGID), "process additional gids")
	for _, d := range ociSpec.Linux.Devices {
		if d.Path != "/dev/nvidia0" {
			continue
		}
		require.NotNil(t, d.FileMode)
		assert.Equal(t, fs.FileMode(0o660), *d.FileMode)
		require.NotNil(t, d.GID)
		assert.Equal(t, uint32(videoGID), *d.GID)
		return
	}
	assert.Fail(t, "no /dev/nvidia0 in the injected spec")
}
