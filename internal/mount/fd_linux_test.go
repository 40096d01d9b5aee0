package mount

import (
	"errors"
	"os"
	"syscall"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	wantOptions(t, c.options(t, target), "ro", "nosuid", "nodev")
	if data, err := os.ReadFile(c.Path(target)); string(data) != "image libcuda" {
		t.Errorf("container reads %q, %v", data, err)
	}
	if _, err := os.OpenFile(c.Path(target), os.O_WRONLY, 0); !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing the bound file: %v, want EROFS", err)
	}
	if err := c.detach(t, m); err != nil {
		t.Fatal(err)
	}
	if c.MountAt(t, target) != nil {
		t.Error("still mounted after Detach")
	}
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
		f, err := os.OpenFile(host+"/"+libTarget, os.O_RDONLY|unix.O_PATH, 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := OpenSourceFd(int(f.Fd()), f.Name(), ReadOnly, &Options{Method: method})
		if err != nil {
			t.Fatalf("%v: %v", method, err)
		}
		if !s.Mode().IsRegular() {
			t.Errorf("%v: source mode %v, want a regular file", method, s.Mode())
		}
		s.Close()
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
			t.Errorf("%v: the caller's descriptor was closed: %v", method, err)
		}
		f.Close()
	}
}
