package liblink

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

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
		if got := IsSONAME(tc.link, tc.target); got != tc.want {
			t.Errorf("IsSONAME(%q, %q) = %v, want %v", tc.link, tc.target, got, tc.want)
		}
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
	if err != nil {
		t.Fatal(err)
	}
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
		kept, err := Place(root, tc.target, tc.link, tc.soname)
		if kept != tc.kept || (err != nil) != tc.fails || (err != nil && !errors.Is(err, rootfs.ErrWrongType)) {
			t.Errorf("Place(%s -> %s, soname %v) = %q, %v; want %q, failure %v", tc.link, tc.target, tc.soname, kept, err, tc.kept, tc.fails)
		}
		if tc.readlink != "" {
			if got, err := os.Readlink(filepath.Join(dir, tc.link)); got != tc.readlink {
				t.Errorf("%s -> %q (%v), want %q", tc.link, got, err, tc.readlink)
			}
		}
	}
	for _, f := range []string{"libcuda.so", "libnvidia-ml.so.1"} {
		if b, _ := os.ReadFile(filepath.Join(dir, "usr/lib64", f)); string(b) != "image "+f {
			t.Errorf("the image's %s changed: %q", f, b)
		}
	}
}
