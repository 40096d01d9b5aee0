package devices_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
)

// TestDiscoverWSL: on a WSL2 host (<dev root>/dxg) Discover reads no
// procfs (the host's is removed here) and loads no NVML, whatever the
// backend: the backend is WSL, no GPU is listed one by one, and /dev/dxg,
// with the device number the node has, is the one control node.
func TestDiscoverWSL(t *testing.T) {
	real := os.Geteuid() == 0
	fh, err := fakehost.GenerateWSL(t.TempDir(), &fakehost.WSLOptions{RealNodes: real})
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(fh.ProcRoot))
	want := devices.Node{Path: devices.DevDXG}
	if real {
		want.Major, want.Minor = fakehost.WSLDXGMajor, fakehost.WSLDXGMinor
	}
	for _, b := range []devices.Backend{devices.Auto, devices.NVML, devices.Procfs} {
		t.Run(string(b), func(t *testing.T) {
			h, err := devices.Discover(context.Background(), &devices.Options{Backend: b,
				Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}})
			require.NoError(t, err)
			assert.Equal(t, devices.WSL, h.Backend, "backend")
			assert.Empty(t, h.GPUs, "GPUs")
			assert.Equal(t, []devices.Node{want}, h.ControlNodes, "control nodes")
			assert.Equal(t, devices.NVCapsNone, h.NVCapsStyle, "nvcaps style")
			assert.Equal(t, filepath.Join(fh.DevRoot, "dxg"), h.HostPath(devices.DevDXG))
			for _, id := range []string{"all", "0", "GPU-0"} {
				sel, err := h.Select(id)
				require.NoError(t, err, "selecting %s", id)
				assert.Empty(t, sel.GPUs, "selecting %s: no GPU of its own (all are behind /dev/dxg)", id)
			}
		})
	}
}
