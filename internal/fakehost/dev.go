package fakehost

import (
	"fmt"
	"io/fs"

	"github.com/go-nvc/nvc/internal/fstree"
)

func devNode(path string, major, minor int, mode fs.FileMode) fstree.Entry {
	return fstree.Entry{Kind: fstree.Char, Path: path, Major: uint32(major), Minor: uint32(minor), Mode: mode}
}

// devEntries is the dev tree a loaded driver and nvidia-modprobe leave: a
// node per GPU, the control nodes, the nvidia-caps nodes of the MIG config
// and monitor caps and of every MIG device, and imex IMEX channels.
func devEntries(gpus []gpuFacts, imex int) []fstree.Entry {
	e := []fstree.Entry{
		devNode("dev/nvidiactl", MajorNvidia, 255, 0o666),
		devNode("dev/nvidia-modeset", MajorNvidia, 254, 0o666),
		devNode("dev/nvidia-uvm", MajorUVM, 0, 0o666),
		devNode("dev/nvidia-uvm-tools", MajorUVM, 1, 0o666),
		{Kind: fstree.Dir, Path: "dev/nvidia-caps", Mode: 0o755},
		capNode(capConfigMinor, capModeConfig),
		capNode(capMonitorMinor, capModeReadable),
	}
	for _, g := range gpus {
		e = append(e, devNode(fmt.Sprintf("dev/nvidia%d", g.minor), MajorNvidia, g.minor, 0o666))
		for _, m := range g.migs {
			e = append(e, capNode(giMinor(g.minor, m.gi), capModeReadable),
				capNode(ciMinor(g.minor, m.gi, m.ci), capModeReadable))
		}
	}
	if imex > 0 {
		e = append(e, fstree.Entry{Kind: fstree.Dir, Path: "dev/nvidia-caps-imex-channels", Mode: 0o755})
	}
	for ch := range imex {
		e = append(e, devNode(fmt.Sprintf("dev/nvidia-caps-imex-channels/channel%d", ch), MajorIMEX, ch, 0o666))
	}
	return e
}

func capNode(minor int, mode fs.FileMode) fstree.Entry {
	return devNode(fmt.Sprintf("dev/nvidia-caps/nvidia-cap%d", minor), MajorCaps, minor, mode)
}
