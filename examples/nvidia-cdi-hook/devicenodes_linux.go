//go:build !cgo

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
	"github.com/go-nvc/nvc/internal/rootfs"
)

const (
	// paramsPath is the driver's parameters file, in the container.
	paramsPath = "/proc/driver/nvidia/params"
	// maxParamsSize bounds the host's params file (a few hundred bytes).
	maxParamsSize = 64 << 10
)

var (
	modifyOn  = []byte("ModifyDeviceFiles: 1")
	modifyOff = []byte("ModifyDeviceFiles: 0")
)

// deviceNodesFlags declares disable-device-node-modification's flags and
// returns its action: when the host's params say ModifyDeviceFiles: 1,
// mount a read-only copy saying 0 over the container's params, so that
// libnvidia-ml in the container does not create device nodes.
func deviceNodesFlags(flags *pflag.FlagSet) action {
	procRoot := flags.String("proc-root", "/proc", "the host's procfs `DIR`, where driver/nvidia/params is read (never the container's)")
	return func(rootfsPath string, h *hookEnv) error {
		data, err := readHostParams(*procRoot)
		if errors.Is(err, fs.ErrNotExist) {
			h.log.Debug("no driver params on the host: nothing to mask", "proc-root", *procRoot)
			return nil
		}
		if err != nil {
			return err
		}
		masked, ok := disableModify(data)
		if !ok {
			h.log.Debug("the host's params do not say ModifyDeviceFiles: 1: nothing to mask")
			return nil
		}
		return maskParams(rootfsPath, masked, h)
	}
}

// readHostParams reads <procRoot>/driver/nvidia/params, a host path, as
// every file that may not be what it claims (inroot.ReadRegularFile):
// anything but a regular file there is refused unopened.
func readHostParams(procRoot string) ([]byte, error) {
	return inroot.ReadRegularFile(filepath.Join(procRoot, "driver/nvidia/params"), maxParamsSize)
}

// disableModify returns params with every "ModifyDeviceFiles: 1" line
// saying 0 instead, the rest verbatim, and whether there was one.
func disableModify(params []byte) ([]byte, bool) {
	lines := bytes.SplitAfter(params, []byte("\n"))
	changed := false
	for i, l := range lines {
		if bytes.Equal(bytes.TrimSuffix(l, []byte("\n")), modifyOn) {
			lines[i] = append(slices.Clone(modifyOff), l[len(modifyOn):]...)
			changed = true
		}
	}
	return bytes.Join(lines, nil), changed
}

// maskParams mounts a read-only copy holding data over the container's
// params, found inside the root without following its last component. A
// container without params has nothing to mask; a kernel without the new
// mount API (Linux 5.12) cannot mask it: both are warned about, not
// errors, as the container still runs correctly.
func maskParams(rootfsPath string, data []byte, h *hookEnv) error {
	root, err := rootfs.Open(rootfsPath, nil)
	if err != nil {
		return err
	}
	defer root.Close()
	target, err := root.Lookup(paramsPath)
	if errors.Is(err, fs.ErrNotExist) {
		h.log.Warn("the container has no driver params: nothing to mask", "path", paramsPath)
		return nil
	}
	if err != nil {
		return err
	}
	defer target.Close()
	if !target.Mode().IsRegular() {
		return fmt.Errorf("masking %s in rootfs %q: %s, not a regular file: %w", paramsPath, root.Path(), target.Mode().Type(), rootfs.ErrWrongType)
	}
	err = mountCopy(data, target, h.mask)
	if errors.Is(err, unix.ENOSYS) {
		h.log.Warn("the kernel lacks the new mount API (Linux 5.12): params not masked", "error", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("masking %s in rootfs %q: %w", paramsPath, root.Path(), err)
	}
	h.log.Debug("params masked", "path", paramsPath)
	return nil
}
