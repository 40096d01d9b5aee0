package devices

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// DevDXG is WSL2's GPU node: the dxgkrnl paravirtual device through which
// a WSL2 guest reaches every GPU of the Windows host.
const DevDXG = "/dev/dxg"

// WSL is the backend of a WSL2 host (<dev root>/dxg exists): the host has
// no /proc/driver/nvidia and no /dev/nvidia* nodes, and Discover neither
// reads procfs nor loads NVML. It lists no GPU one by one: every GPU is
// behind DevDXG, the one control node, as in the NVIDIA Container
// Toolkit's wsl mode (one device, "all"): Select then selects no GPU for
// any ID, as on any host without GPUs, and a container gets every GPU
// through DevDXG. Discover takes it whatever Options.Backend says.
const WSL Backend = "wsl"

// isWSL reports whether the dev root has dxg, as libnvidia-container and
// package driver tell a WSL2 host.
func isWSL(h *Host) bool {
	_, err := os.Stat(h.HostPath(DevDXG))
	return err == nil
}

// discoverWSL fills h for a WSL2 host: DevDXG, with the device number the
// node has, is the one control node.
func discoverWSL(h *Host) error {
	p := h.HostPath(DevDXG)
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("discovering WSL devices: %w", err)
	}
	n := Node{Path: DevDXG}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode()&os.ModeCharDevice != 0 {
		n.Major, n.Minor = unix.Major(st.Rdev), unix.Minor(st.Rdev)
	}
	h.Backend, h.NVCapsStyle = WSL, NVCapsNone
	h.GPUs, h.ControlNodes = []GPU{}, []Node{n}
	return nil
}
