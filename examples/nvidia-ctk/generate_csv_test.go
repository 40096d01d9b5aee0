package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"tags.cncf.io/container-device-interface/pkg/cdi"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

func csvLinks(s *cdi.Spec) string {
	var args []string
	for _, h := range s.ContainerEdits.Hooks {
		args = append(args, strings.Join(h.Args, " "))
	}
	return strings.Join(args, "\n")
}

func mountPaths(s *cdi.Spec) []string {
	var out []string
	for _, m := range s.ContainerEdits.Mounts {
		out = append(out, m.ContainerPath)
	}
	return out
}

// TestGenerateCSV: --mode=csv on the simulated Jetson writes device 0 and
// all with the Tegra nodes, the mount specs' files as common mounts and
// the links and loader cache as hooks; auto resolves to csv there;
// --csv.ignore-pattern drops sym entries, --device-id other than 0 is an
// error, a --csv.file with a bad line is an error naming file and line.
func TestGenerateCSV(t *testing.T) {
	testutil.RequireRoot(t) // real nodes in the simulated host
	s := generateFile(t, "csv.json", "--mode=csv", "--simulate=jetson-orin")
	assert.Equal(t, []string{"0", "all"}, deviceNames(s.Spec))
	assert.Contains(t, nodePaths(s.Devices[0].ContainerEdits), "/dev/nvmap")
	assert.Contains(t, nodePaths(s.Devices[0].ContainerEdits), "/dev/nvgpu/igpu0/ctrl")
	assert.Equal(t, nodePaths(s.Devices[0].ContainerEdits), nodePaths(s.Devices[1].ContainerEdits))
	assert.Contains(t, mountPaths(s), fakehost.TegraLibDir+"/libcuda.so.1.1")
	assert.NotContains(t, mountPaths(s), "/usr/lib/aarch64-linux-gnu/libnvinfer.so.8.6.2", "tensorrt.csv is not a default --csv.file")
	assert.Contains(t, csvLinks(s), "--link libcuda.so.1.1::"+fakehost.TegraLibDir+"/libcuda.so.1")
	assert.Contains(t, csvLinks(s), "update-ldcache --folder "+fakehost.TegraLibDir)

	auto := generateFile(t, "auto.json", "--simulate=jetson-orin")
	assert.Equal(t, deviceNames(s.Spec), deviceNames(auto.Spec), "auto on a Tegra host is csv")
	assert.Equal(t, len(s.ContainerEdits.Mounts), len(auto.ContainerEdits.Mounts))

	ign := generateFile(t, "ign.json", "--mode=csv", "--simulate=jetson-orin", "--csv.ignore-pattern=**/libcuda.so*")
	assert.NotContains(t, csvLinks(ign), "libcuda.so.1.1::")
	assert.Contains(t, csvLinks(ign), "libnvidia-ptxjitcompiler.so.1")

	code, _, stderr := ctk(t, "cdi", "generate", "--mode=csv", "--simulate=jetson-orin", "--device-id=1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "1: unknown device")

	h := nvctest.NewHost(t, nvctest.JetsonOrin, &nvctest.Options{RealNodes: true})
	bad := filepath.Join(t.TempDir(), "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("dev, /dev/nvmap\nlibrary, /x\n"), 0o644))
	code, _, stderr = ctk(t, "cdi", "generate", "--mode=csv", "--driver-root", h.Roots.Driver, "--csv.file", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, bad+":2:")
	files := filepath.Join(h.MountSpecDir(), "devices.csv") + "," + filepath.Join(h.MountSpecDir(), "tensorrt.csv")
	s = generateFile(t, "extra.json", "--mode=csv", "--driver-root", h.Roots.Driver, "--csv.file", files)
	assert.Equal(t, []string{"/usr/lib/aarch64-linux-gnu/libnvinfer.so.8.6.2", "/etc/nv_tegra_release"}, mountPaths(s))
}
