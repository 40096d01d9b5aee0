package mount

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// imageSpec is a container image with a library of its own, reached
// through an image symlink, to mount elsewhere in the same rootfs (as CUDA
// compat libraries are).
const imageSpec = `
file    opt/compat/libcuda.so.560 "image libcuda"
symlink usr/local/cuda /opt
dir     usr/lib64
`

// TestOpenSourceFd mounts a file of the container's own rootfs, opened
// there by descriptor on the confined thread, with both methods, into the
// same container: the mount shows the image's file, read-only, and is
// undone like any other.
func TestOpenSourceFd(t *testing.T) {
	for _, method := range methods {
		for _, pivot := range []bool{false, true} {
			name := method.String() + map[bool]string{true: "/pivoted"}[pivot]
			t.Run(name, func(t *testing.T) { testOpenSourceFd(t, method, pivot) })
		}
	}
}

func testOpenSourceFd(t *testing.T, method Method, pivot bool) {
	c := startCtr(t, &container.Options{PivotRoot: pivot, Spec: imageSpec})
	const target = "usr/lib64/libcuda.so.560"
	var m *Mount
	err := c.run(t, func(r *rootfs.Root) error {
		src, err := openInImage(r, "usr/local/cuda/compat/libcuda.so.560", method)
		if err != nil {
			return err
		}
		defer src.Close()
		e, err := r.CreateFile(target, 0o644)
		if err != nil {
			return err
		}
		defer e.Close()
		m, err = src.AttachEntry(e)
		return err
	})
	require.NoError(t, err)
	defer m.Close()
	wantOptions(t, c.options(t, target), "ro", "nosuid", "nodev")
	data, err := os.ReadFile(c.Path(target))
	if assert.NoError(t, err, "container reads") {
		assert.Equal(t, "image libcuda", string(data), "container reads")
	}
	_, err = os.OpenFile(c.Path(target), os.O_WRONLY, 0)
	assert.ErrorIs(t, err, syscall.EROFS, "writing the bound file")
	require.NoError(t, c.detach(t, m))
	assert.Nil(t, c.MountAt(t, target), "still mounted after Detach")
}

// openInImage opens unsafePath inside r and makes a source of it.
func openInImage(r *rootfs.Root, unsafePath string, method Method) (*Source, error) {
	f, err := r.OpenRegular(unsafePath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return OpenSourceFd(int(f.Fd()), unsafePath, ReadOnly|NoSuid|NoDev, &Options{Method: method})
}

// TestOpenSourceFdKeepsFd: the caller's descriptor stays open and its own.
func TestOpenSourceFdKeepsFd(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		t.Run(method.String(), func(t *testing.T) {
			f, err := os.OpenFile(host+"/"+libTarget, os.O_RDONLY|unix.O_PATH, 0)
			require.NoError(t, err)
			defer f.Close()
			s, err := OpenSourceFd(int(f.Fd()), f.Name(), ReadOnly, &Options{Method: method})
			require.NoError(t, err, "%v", method)
			assert.True(t, s.Mode().IsRegular(), "%v: source mode %v, want a regular file", method, s.Mode())
			s.Close()
			var st syscall.Stat_t
			assert.NoError(t, syscall.Fstat(int(f.Fd()), &st), "%v: the caller's descriptor was closed", method)
		})
	}
}
