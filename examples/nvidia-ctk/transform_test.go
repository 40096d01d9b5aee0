package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"tags.cncf.io/container-device-interface/pkg/cdi"
)

// TestCDITransformRoot: a spec generated against a driver root has its
// host paths moved to another root, and the result is a valid spec.
func TestCDITransformRoot(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.json")
	require.NoError(t, os.WriteFile(in, []byte(`{"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu",
		"devices": [{"name": "0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0", "hostPath": "/run/nvidia/driver/dev/nvidia0"}]}}],
		"containerEdits": {"mounts": [{"hostPath": "/run/nvidia/driver/usr/lib/libcuda.so.1", "containerPath": "/usr/lib/libcuda.so.1"}]}}`), 0o644))
	out := filepath.Join(t.TempDir(), "out.yaml")
	code, stdout, stderr := ctk(t, "cdi", "transform", "root", "--from", "/run/nvidia/driver", "--to", "/host", "--input", in, "--output", out)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout)
	spec, err := cdi.ReadSpec(out, 0)
	require.NoError(t, err)
	assert.Equal(t, "/host/usr/lib/libcuda.so.1", spec.ContainerEdits.Mounts[0].HostPath)
	assert.Equal(t, "/host/dev/nvidia0", spec.Devices[0].ContainerEdits.DeviceNodes[0].HostPath)
	assert.Equal(t, "/dev/nvidia0", spec.Devices[0].ContainerEdits.DeviceNodes[0].Path)

	code, _, stderr = ctk(t, "cdi", "transform", "root", "--input", in, "--relative-to", "guest")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `unknown --relative-to "guest"`)
}
