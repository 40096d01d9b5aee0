//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakenvml"
)

// TestCDIPodmanDeviceID runs podman 4.3 with the spec `nvidia-ctk cdi
// generate --device-id 2` writes: the spec names GPU 2 alone (its index,
// its UUID and "all", which holds only GPU 2's nodes: /dev/nvidia2 and
// its DRM card and render nodes), `podman run --device
// <kind>=2` gives the container GPU 2 (its node, the driver, the program
// that needs libcuda.so.1 running, the device cgroup allowing it) and no
// other GPU, and `--device <kind>=0` fails with podman's error naming
// the unresolvable device, running nothing.
func TestCDIPodmanDeviceID(t *testing.T) {
	requirePodman(t, "runc")
	c := newCDICase(t, uniqueClass(), "--device-id", "2")
	gpu2 := fakenvml.GPUUUID("dgxa100", 2)
	var names []string
	for _, d := range c.spec.Devices {
		names = append(names, d.Name)
	}
	assert.ElementsMatch(t, []string{"2", gpu2, "all"}, names, "devices of the spec generated with --device-id 2")
	var allNodes []string
	for _, n := range c.device(t, "all").DeviceNodes {
		allNodes = append(allNodes, n.Path)
	}
	assert.Equal(t, []string{"/dev/nvidia2", "/dev/dri/card3", "/dev/dri/renderD130"}, allNodes, "device all of the --device-id 2 spec")

	for _, name := range []string{"2", gpu2} {
		t.Run(strings.SplitN(name, "-", 2)[0], func(t *testing.T) {
			got, rootfs := c.inspect(t, "runc", []string{"/dev/nvidia2", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl"}, c.qualified(name))
			checks := []probeCheck{
				{"/dev/nvidia2", got["/dev/nvidia2"] == charDev(195, 2), "195:2"},
				{"/dev/nvidiactl", got["/dev/nvidiactl"] == charDev(195, 255), "195:255"},
				{"/dev/nvidia0", isMissing(got["/dev/nvidia0"]), "absent (GPU 0 is not in the spec)"},
				{"/dev/nvidia1", isMissing(got["/dev/nvidia1"]), "absent"},
				{"libcuda.so.1", got["libcuda.so.1"] == "libcuda.so."+c.host.DriverVersion, "a link made by create-symlinks"},
				{"cudaprog", got["cudaprog"] == "exit 0", "exit 0: the loader found libcuda.so.1"},
				{"open1", strings.Contains(got["open1"], "Operation not permitted"), "EPERM (cgroup denies 195:1)"},
			}
			assertProbe(t, got, checks)
			checkCacheListsLibcuda(t, rootfs, "/usr/lib64")
		})
	}
	t.Run("another-id", func(t *testing.T) {
		stdout, stderr, err := podman(t, "runc", []string{"--device", c.qualified("0")}, busyboxRootfs(t), "/bin/busybox", "echo", "ran")
		require.Error(t, err, "podman run --device %s with a spec for GPU 2 only: stdout %q", c.qualified("0"), stdout)
		assert.NotContains(t, stdout, "ran")
		assert.Contains(t, stderr, "unresolvable CDI devices "+c.qualified("0"))
	})
}
