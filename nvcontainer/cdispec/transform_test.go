package cdispec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/nvcontainer/cdispec"
)

func rootSpec() *specs.Spec {
	return &specs.Spec{
		ContainerEdits: specs.ContainerEdits{
			Mounts: []*specs.Mount{
				{HostPath: "/run/nvidia/driver/usr/lib/libcuda.so.1", ContainerPath: "/usr/lib/libcuda.so.1"},
				{HostPath: "/run/nvidia/driverx/lib.so", ContainerPath: "/run/nvidia/driver/x"},
			},
			Hooks: []*specs.Hook{{HookName: "createContainer", Path: "/run/nvidia/driver/usr/bin/nvidia-cdi-hook"}},
		},
		Devices: []specs.Device{{Name: "0", ContainerEdits: specs.ContainerEdits{DeviceNodes: []*specs.DeviceNode{
			{Path: "/run/nvidia/driver/dev/nvidia0"},
			{Path: "/dev/nvidiactl", HostPath: "/run/nvidia/driver/dev/nvidiactl"},
		}}}},
	}
}

// TestTransformRoot: host paths under --from move under --to, whole
// components only; with container the container paths move instead.
func TestTransformRoot(t *testing.T) {
	t.Run("host", func(t *testing.T) {
		s := rootSpec()
		require.NoError(t, cdispec.TransformRoot(s, "/run/nvidia/driver", "/", false))
		assert.Equal(t, "/usr/lib/libcuda.so.1", s.ContainerEdits.Mounts[0].HostPath)
		assert.Equal(t, "/run/nvidia/driverx/lib.so", s.ContainerEdits.Mounts[1].HostPath, "not under the root")
		assert.Equal(t, "/run/nvidia/driver/x", s.ContainerEdits.Mounts[1].ContainerPath, "a container path moved")
		assert.Equal(t, "/usr/bin/nvidia-cdi-hook", s.ContainerEdits.Hooks[0].Path)
		nodes := s.Devices[0].ContainerEdits.DeviceNodes
		assert.Equal(t, [2]string{"/run/nvidia/driver/dev/nvidia0", "/dev/nvidia0"}, [2]string{nodes[0].Path, nodes[0].HostPath})
		assert.Equal(t, [2]string{"/dev/nvidiactl", "/dev/nvidiactl"}, [2]string{nodes[1].Path, nodes[1].HostPath})
	})
	t.Run("container", func(t *testing.T) {
		s := rootSpec()
		require.NoError(t, cdispec.TransformRoot(s, "/run/nvidia/driver", "/opt", true))
		assert.Equal(t, "/opt/x", s.ContainerEdits.Mounts[1].ContainerPath)
		assert.Equal(t, "/run/nvidia/driver/usr/lib/libcuda.so.1", s.ContainerEdits.Mounts[0].HostPath, "a host path moved")
		assert.Equal(t, "/opt/dev/nvidia0", s.Devices[0].ContainerEdits.DeviceNodes[0].Path)
	})
	t.Run("relative", func(t *testing.T) {
		assert.ErrorIs(t, cdispec.TransformRoot(rootSpec(), "run", "/", false), cdispec.ErrInvalid)
	})
}
