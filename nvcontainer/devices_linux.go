package nvcontainer

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// checkDevice refuses a device source that is not a character device
// with the plan's major:minor, before anything is mounted.
func checkDevice(m Mount, src *mount.Source) error {
	if src.Mode()&fs.ModeCharDevice == 0 {
		return fmt.Errorf("device source is %s, want a character device: %w", typeName(src.Mode()), ErrWrongType)
	}
	want := unix.Mkdev(m.Device.Major, m.Device.Minor)
	if got := src.Rdev(); got != want {
		return fmt.Errorf("device source is %d:%d, the plan says %d:%d: %w",
			unix.Major(got), unix.Minor(got), m.Device.Major, m.Device.Minor, ErrWrongType)
	}
	return nil
}

// deviceTarget is the entry to mount a device node on: an existing
// character device with the same number (as a runtime creates from the
// OCI spec's linux.devices) is used as it is; otherwise an empty regular
// file is created, as libnvidia-container does (it never calls mknod in a
// container). Anything else there is an error.
func deviceTarget(root *rootfs.Root, target string, rdev uint64, perm fs.FileMode) (*rootfs.Entry, error) {
	e, err := root.Lookup(target)
	switch {
	case err == nil && e.Mode()&fs.ModeCharDevice != 0 && e.Rdev() == rdev:
		return e, nil
	case err == nil && e.Mode().IsRegular():
		return e, nil
	case err == nil:
		e.Close()
		return nil, fmt.Errorf("%q is %s, want the device %d:%d or a regular file: %w",
			target, typeName(e.Mode()), unix.Major(rdev), unix.Minor(rdev), ErrWrongType)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return root.CreateFile(target, perm)
}
