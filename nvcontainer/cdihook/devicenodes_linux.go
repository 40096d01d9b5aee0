package cdihook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// DisableDeviceNodeModification keeps libnvidia-ml in the container whose
// root filesystem is rootfsPath from creating device nodes: when the host's
// <ProcRoot>/driver/nvidia/params says ModifyDeviceFiles: 1, it mounts a
// read-only copy saying 0 (the rest verbatim) over the container's
// [ParamsPath], found inside the root without following its last
// component. The mount is made in the calling thread's mount namespace,
// which must be the container's (a createContainer hook runs there). A
// host without params or with ModifyDeviceFiles: 0, a container without
// params and a kernel without the new mount API are not errors: nothing
// is mounted and the result says why. A nil opts means the defaults.
func DisableDeviceNodeModification(ctx context.Context, rootfsPath string, opts *DeviceNodeOptions) (DeviceNodeResult, error) {
	if err := context.Cause(ctx); err != nil {
		return DeviceNodeResult{}, err
	}
	if opts == nil {
		opts = &DeviceNodeOptions{}
	}
	procRoot := opts.ProcRoot
	if procRoot == "" {
		procRoot = "/proc"
	}
	data, err := readHostParams(procRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return DeviceNodeResult{Skipped: SkippedNoHostParams}, nil
	}
	if err != nil {
		return DeviceNodeResult{}, err
	}
	masked, ok := disableModify(data)
	if !ok {
		return DeviceNodeResult{Skipped: SkippedNotModifying}, nil
	}
	return maskParams(rootfsPath, masked, opts.mask)
}

// readHostParams reads <procRoot>/driver/nvidia/params, a host path, as
// every file that may not be what it claims (inroot.ReadRegularFile):
// anything but a regular file there is refused unopened.
func readHostParams(procRoot string) ([]byte, error) {
	return inroot.ReadRegularFile(filepath.Join(procRoot, "driver/nvidia/params"), maxParamsSize)
}

// maskParams mounts a read-only copy holding data over the container's
// params.
func maskParams(rootfsPath string, data []byte, how maskMethod) (DeviceNodeResult, error) {
	root, err := rootfs.Open(rootfsPath, nil)
	if err != nil {
		return DeviceNodeResult{}, err
	}
	defer root.Close()
	target, err := root.Lookup(ParamsPath)
	if errors.Is(err, fs.ErrNotExist) {
		return DeviceNodeResult{Skipped: SkippedNoContainerParams}, nil
	}
	if err != nil {
		return DeviceNodeResult{}, err
	}
	defer target.Close()
	if !target.Mode().IsRegular() {
		return DeviceNodeResult{}, fmt.Errorf("masking %s in rootfs %q: %s, not a regular file: %w", ParamsPath, root.Path(), target.Mode().Type(), rootfs.ErrWrongType)
	}
	err = mountCopy(data, target, how)
	if errors.Is(err, unix.ENOSYS) {
		return DeviceNodeResult{Skipped: SkippedNoMountAPI}, nil
	}
	if err != nil {
		return DeviceNodeResult{}, fmt.Errorf("masking %s in rootfs %q: %w", ParamsPath, root.Path(), err)
	}
	return DeviceNodeResult{Masked: true}, nil
}
