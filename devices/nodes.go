package devices

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-nvc/nvc/driver"
)

// DefaultModprobeTimeout bounds a modprobe run when
// NodeOptions.ModprobeTimeout is zero. A module load takes well under a
// second; a modprobe hung on a wedged device must not hang every
// container start.
const DefaultModprobeTimeout = 30 * time.Second

// NodeOptions change what CreateNodes does. A nil *NodeOptions means
// defaults.
type NodeOptions struct {
	// Roots say where the driver, procfs and /dev are: when the driver
	// root (nvidia-container-cli --root) is not "/", modprobe runs
	// chrooted into it, as libnvidia-container's kmods helper does, and
	// nodes are made under the dev root. Zero: the running host, defaulted
	// by driver.Roots.WithDefaults (the dev root is <driver root>/dev).
	Roots driver.Roots
	// LoadModules runs modprobe for nvidia, nvidia_uvm and nvidia_modeset
	// when they are not loaded (neither <proc root>/modules nor
	// <sys root>/module/<name>/initstate says so), by nvidia-modprobe's
	// rules: only when <sys root>/bus/pci/devices lists an NVIDIA display
	// controller (vendor 0x10de, class 0x03xxxx) or cannot be read, and
	// nvidia_modeset also on a Tegra SoC. False: no module is loaded. Either
	// way nodes are made only for the modules loaded.
	LoadModules bool
	// ModprobeTimeout bounds each modprobe run: it is killed after that
	// long, and that is a warning like a failing modprobe. Zero:
	// DefaultModprobeTimeout.
	ModprobeTimeout time.Duration
	// Modprobe is the modprobe program, an absolute path inside the
	// driver root. Empty: the path in <proc root>/sys/kernel/modprobe, else
	// /sbin/modprobe.
	Modprobe string
	// IMEXChannels are the IMEX channels to make nodes for. Each must be
	// below the driver's channel count (ImexChannelCount in
	// /proc/driver/nvidia/params, 2048 by default), and the list no
	// longer than it; otherwise CreateNodes fails before making any node.
	// Nil: none.
	IMEXChannels []uint32
}

// NodeReport says what CreateNodes did.
type NodeReport struct {
	// Skipped is why nothing was done ("inside a user namespace"); empty
	// when CreateNodes ran.
	Skipped string `json:"skipped,omitempty"`
	// Loaded are the kernel modules modprobe loaded.
	Loaded []string `json:"loaded,omitempty"`
	// Warnings are the steps that could not be done and are not fatal, as
	// libnvidia-container only logs them: no NVIDIA display controller in
	// sysfs (no module loaded), modprobe missing or failing, a node whose
	// major the driver does not register.
	Warnings []string `json:"warnings,omitempty"`
	// Created are the nodes made (or remade, where something else was in
	// their place); Fixed those whose mode or owner was corrected.
	Created []Node `json:"created,omitempty"`
	Fixed   []Node `json:"fixed,omitempty"`
}

// wantNode is a node to ensure, with the attributes nvidia-modprobe gives
// it.
type wantNode struct {
	Node
	mode     fs.FileMode
	uid, gid uint32
	modify   bool
}

// fileParams are the device file attributes nvidia-modprobe reads from
// /proc/driver/nvidia/params (or a capability file), with its defaults.
type fileParams struct {
	mode     fs.FileMode
	uid, gid uint32
	modify   bool
}

var defaultParams = fileParams{mode: 0o666, modify: true}

// parseFileParams reads DeviceFileUID, DeviceFileGID, DeviceFileMode and
// ModifyDeviceFiles (or a capability's DeviceFileModify) over the defaults.
func parseFileParams(data []byte) (fileParams, error) {
	kv := keyValues(data)
	p := defaultParams
	mode, err1 := uintValue(kv, "DeviceFileMode", uint32(p.mode))
	uid, err2 := uintValue(kv, "DeviceFileUID", 0)
	gid, err3 := uintValue(kv, "DeviceFileGID", 0)
	modifyKey := "ModifyDeviceFiles"
	if _, ok := kv["DeviceFileModify"]; ok {
		modifyKey = "DeviceFileModify"
	}
	modify, err4 := uintValue(kv, modifyKey, 1)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			return fileParams{}, err
		}
	}
	return fileParams{mode: fs.FileMode(mode) & fs.ModePerm, uid: uid, gid: gid, modify: modify == 1}, nil
}

// readFileParams parses the driver's params file read from path (data
// nil: missing, the driver's defaults).
func readFileParams(path string, data []byte) (fileParams, error) {
	if data == nil {
		return defaultParams, nil
	}
	p, err := parseFileParams(data)
	if err != nil {
		return fileParams{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return p, nil
}

// defaultIMEXChannels is the driver's default NVreg_ImexChannelCount.
const defaultIMEXChannels = 2048

// checkIMEXChannels refuses, before any node is made, a list of IMEX
// channels longer than the driver's channel count or naming a channel at
// or above it. The count is ImexChannelCount in /proc/driver/nvidia/params
// (NVreg_ImexChannelCount), 2048 when params does not say.
func checkIMEXChannels(paramsPath string, data []byte, ids []uint32) error {
	if len(ids) == 0 {
		return nil
	}
	limit, err := uintValue(keyValues(data), "ImexChannelCount", defaultIMEXChannels)
	if err != nil {
		return fmt.Errorf("reading %s: %w", paramsPath, err)
	}
	if uint64(len(ids)) > uint64(limit) {
		return fmt.Errorf("%w: %d IMEX channels asked for, the driver has %d", ErrInvalid, len(ids), limit)
	}
	for _, id := range ids {
		if id >= limit {
			return fmt.Errorf("%w: IMEX channel %d is not below the driver's channel count %d", ErrInvalid, id, limit)
		}
	}
	return nil
}

func want(n Node, p fileParams) wantNode {
	return wantNode{Node: n, mode: p.mode, uid: p.uid, gid: p.gid, modify: p.modify}
}

// plannedNodes lists the nodes nvidia-modprobe would make for this driver
// state, each only once its module is loaded: with nvidia, nvidiactl, a
// node per GPU minor and the IMEX channels asked for (the capabilities come
// from capNodes); with nvidia_uvm, nvidia-uvm and -tools (major from
// /proc/devices, uid, gid and mode the driver's defaults: nvidia-modprobe
// reads no params file for them); with nvidia_modeset, nvidia-modeset.
func plannedNodes(f *procFacts, params fileParams, minors []uint32, loaded map[string]bool, imex []uint32) ([]wantNode, []string) {
	var nodes []wantNode
	var warn []string
	if loaded["nvidia"] {
		nodes = append(nodes, want(Node{DevNvidiactl, MajorNvidia, 255}, params))
		for _, m := range minors {
			nodes = append(nodes, want(Node{fmt.Sprintf("/dev/nvidia%d", m), MajorNvidia, m}, params))
		}
		var w []string
		nodes, w = imexNodes(f, params, imex, nodes)
		warn = append(warn, w...)
	}
	if uvm, ok := f.majors["nvidia-uvm"]; ok && loaded["nvidia_uvm"] {
		nodes = append(nodes, want(Node{DevNvidiaUVM, uvm, 0}, defaultParams),
			want(Node{DevNvidiaUVMTool, uvm, 1}, defaultParams))
	} else if loaded["nvidia_uvm"] {
		warn = append(warn, "no nvidia-uvm major in /proc/devices: /dev/nvidia-uvm not created")
	}
	if loaded["nvidia_modeset"] {
		nodes = append(nodes, want(Node{DevNvidiaModeset, MajorNvidia, 254}, params))
	}
	return nodes, warn
}

// imexNodes appends the IMEX channel nodes asked for, with the major of
// nvidia-caps-imex-channels in /proc/devices.
func imexNodes(f *procFacts, params fileParams, imex []uint32, nodes []wantNode) ([]wantNode, []string) {
	major, ok := f.majors["nvidia-caps-imex-channels"]
	if !ok {
		if len(imex) > 0 {
			return nodes, []string{"no nvidia-caps-imex-channels major in /proc/devices: IMEX channels not created"}
		}
		return nodes, nil
	}
	for _, id := range imex {
		nodes = append(nodes, want(Node{fmt.Sprintf("%s/channel%d", DevIMEXChannels, id), major, id}, params))
	}
	return nodes, nil
}

// capNodes lists a node for every capability file present under
// /proc/driver/nvidia/capabilities that mig-minors names, with the minor,
// mode and modify flag of the file (uid and gid 0), as nvidia-modprobe's
// nvidia_cap_mknod makes them.
func capNodes(f *procFacts) ([]wantNode, error) {
	major, ok := f.majors["nvidia-caps"]
	if !ok || !f.hasCaps {
		return nil, nil
	}
	var nodes []wantNode
	for _, name := range capFileNames(f) {
		proc := ProcCapabilities + "/" + name
		if _, listed := f.migMinors.lookup(migMinorsName(name)); !listed {
			continue
		}
		data, err := os.ReadFile(f.path(proc))
		if err != nil {
			return nil, err
		}
		minor, ok := deviceFileMinor(keyValues(data))
		p, err := parseFileParams(data)
		if !ok || err != nil {
			return nil, fmt.Errorf("%w: capability file %s", ErrInvalid, f.path(proc))
		}
		p.uid, p.gid = 0, 0
		nodes = append(nodes, want(Node{capNodePath(minor), major, minor}, p))
	}
	return nodes, nil
}

// capFileNames lists the MIG capability files under capabilities/, relative
// to it: mig/config, mig/monitor, gpuN/mig/giG/access, gpuN/mig/giG/ciC/access.
func capFileNames(f *procFacts) []string {
	root := f.path(ProcCapabilities)
	var names []string
	for _, pat := range []string{"mig/config", "mig/monitor", "gpu*/mig/gi*/access", "gpu*/mig/gi*/ci*/access"} {
		matches, _ := filepath.Glob(filepath.Join(root, pat))
		for _, m := range matches {
			names = append(names, strings.TrimPrefix(m, root+"/"))
		}
	}
	return names
}

// migMinorsName maps a capability file path (relative to capabilities/) to
// its mig-minors name: mig/config → config, gpu0/mig/gi1/access →
// gpu0/gi1/access.
func migMinorsName(name string) string {
	if rest, ok := strings.CutPrefix(name, "mig/"); ok {
		return rest
	}
	return strings.Replace(name, "/mig/", "/", 1)
}
