package liblink

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/testutil"
)

func TestIsSONAME(t *testing.T) {
	for _, tc := range []struct {
		link, target string
		want         bool
	}{
		{"/usr/lib64/libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15", true},
		{"/usr/lib64/libcuda.so.1", "libcuda.so.550.54.15", true},
		{"/usr/lib/x86_64-linux-gnu/vdpau/libvdpau_nvidia.so.1", "libvdpau_nvidia.so.550.54.15", true},
		{"/usr/lib64/libcuda.so", "libcuda.so.1", false},                 // the development link
		{"/usr/lib64/libGLX_indirect.so.0", "libGLX_nvidia.so.0", false}, // another library
		{"/usr/lib64/libnvidia-opticalflow.so", "libnvidia-opticalflow.so.1", false},
		{"/usr/lib64/gbm/nvidia-drm_gbm.so", "../libnvidia-allocator.so.1", false}, // another dir
		{"/usr/lib64/libcuda.so.1", "libcuda.so.1", false},
		{"/usr/lib64/libcuda.so.1", "/usr/lib64/libcuda.so.550.54.15", false},
		{"/usr/lib64/libcuda.sox.1", "libcuda.sox.2", false},
		{"/usr/bin/nvidia-smi", "nvidia-smi.1", false},
	} {
		t.Run(tc.link+"->"+tc.target, func(t *testing.T) {
			assert.Equal(t, tc.want, IsSONAME(tc.link, tc.target), "IsSONAME(%q, %q)", tc.link, tc.target)
		})
	}
}

// TestPlace is the rule Apply and create-symlinks share, on what an
// image can have at a link's path.
func TestPlace(t *testing.T) {
	dir := testutil.Tree(t, `
		file    usr/lib64/libcuda.so "image libcuda.so"
		file    usr/lib64/libnvidia-ml.so.1 "image libnvidia-ml.so.1"
		symlink usr/lib64/libcuda.so.1 libcuda.so.535.1.1
		symlink usr/lib64/libGLX_indirect.so.0 libGLX_mesa.so.0
		dir     usr/lib64/libnvidia-egl.so.1
	`)
	root, err := rootfs.Open(dir, nil)
	require.NoError(t, err)
	defer root.Close()
	for _, tc := range []struct {
		link, target, kept, readlink string
		soname, fails                bool
	}{
		{"/usr/lib64/libcuda.so", "libcuda.so.1", "regular file", "", false, false},
		{"/usr/lib64/libGLX_indirect.so.0", "libGLX_nvidia.so.0", "symlink", "libGLX_mesa.so.0", false, false},
		{"/usr/lib64/libnvidia-opticalflow.so", "libnvidia-opticalflow.so.1", "", "libnvidia-opticalflow.so.1", false, false},
		{"/usr/lib64/libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15", "", "", true, true},
		{"/usr/lib64/libnvidia-egl.so.1", "libnvidia-egl.so.550.54.15", "", "", true, true},
		{"/usr/lib64/libcuda.so.1", "libcuda.so.550.54.15", "", "libcuda.so.550.54.15", true, false},
	} {
		t.Run(tc.link, func(t *testing.T) {
			kept, err := Place(root, tc.target, tc.link, tc.soname)
			if tc.fails {
				assert.ErrorIs(t, err, rootfs.ErrWrongType, "Place(%s -> %s, soname %v)", tc.link, tc.target, tc.soname)
			} else {
				assert.NoError(t, err, "Place(%s -> %s, soname %v)", tc.link, tc.target, tc.soname)
			}
			assert.Equal(t, tc.kept, kept, "Place(%s -> %s, soname %v): kept", tc.link, tc.target, tc.soname)
			if tc.readlink != "" {
				got, err := os.Readlink(filepath.Join(dir, tc.link))
				assert.Equal(t, tc.readlink, got, "%s -> (%v)", tc.link, err)
			}
		})
	}
	for _, f := range []string{"libcuda.so", "libnvidia-ml.so.1"} {
		b, _ := os.ReadFile(filepath.Join(dir, "usr/lib64", f))
		assert.Equal(t, "image "+f, string(b), "the image's %s changed", f)
	}
}
