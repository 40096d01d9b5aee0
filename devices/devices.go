package devices

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/sentinel"
)

// Backend names the way Discover learns about GPUs.
type Backend string

// Backends of Discover.
const (
	// Auto uses NVML when the library loads and initialises, Procfs
	// otherwise.
	Auto Backend = "auto"
	// NVML asks Options.NVML or, in a cgo build, the driver's
	// libnvidia-ml.so.1 (through go-nvml).
	NVML Backend = "nvml"
	// Procfs reads /proc/driver/nvidia, /proc/driver/nvidia-caps,
	// /proc/devices and /dev, and never loads NVML.
	Procfs Backend = "procfs"
)

// NVCapsStyle says how the driver exposes the nvidia-caps capabilities that
// guard MIG devices, as libnvidia-container's nvc_nvcaps_style does.
type NVCapsStyle string

// The nvidia-caps styles.
const (
	// NVCapsDev: /proc/devices lists an nvidia-caps major; capabilities are
	// /dev/nvidia-caps/nvidia-capN nodes (drivers from 450.51 on).
	NVCapsDev NVCapsStyle = "dev"
	// NVCapsProc: only /proc/driver/nvidia/capabilities exists; the proc
	// files themselves are the capabilities (early R450 drivers).
	NVCapsProc NVCapsStyle = "proc"
	// NVCapsNone: the driver has no capabilities (no MIG support).
	NVCapsNone NVCapsStyle = "none"
)

// Paths of the nodes and files Discover reports, as seen from the host's /
// (map them to the roots discovery used with Host.HostPath).
const (
	DevNvidiactl     = "/dev/nvidiactl"
	DevNvidiaUVM     = "/dev/nvidia-uvm"
	DevNvidiaUVMTool = "/dev/nvidia-uvm-tools"
	DevNvidiaModeset = "/dev/nvidia-modeset"
	DevNvidiaCaps    = "/dev/nvidia-caps"
	DevIMEXChannels  = "/dev/nvidia-caps-imex-channels"
	ProcDriver       = "/proc/driver/nvidia"
	ProcCapabilities = "/proc/driver/nvidia/capabilities"
	ProcMIGMinors    = "/proc/driver/nvidia-caps/mig-minors"
	ProcDevices      = "/proc/devices"
)

// MajorNvidia is the fixed major of /dev/nvidiaN, nvidiactl (minor 255) and
// nvidia-modeset (minor 254).
const MajorNvidia = 195

// Sentinel errors; errors returned by this package match them with
// errors.Is where they apply.
var (
	// ErrNVMLUnavailable: the NVML library could not be loaded or
	// initialised, or the program was built without cgo and was given
	// no Options.NVML.
	ErrNVMLUnavailable = errors.New("NVML unavailable")
	// ErrNoDriver: the NVIDIA kernel driver is not loaded
	// (/proc/driver/nvidia is missing). It is the same value as
	// driver.ErrNoDriver.
	ErrNoDriver = sentinel.ErrNoDriver
	// ErrPermission: the caller lacks a capability the operation needs
	// (creating device nodes needs CAP_MKNOD); the error names it. It
	// matches fs.ErrPermission and is the same value as
	// nvcontainer.ErrPermission.
	ErrPermission = sentinel.ErrPermission
	// ErrUnknownDevice: a device ID matches no GPU or MIG device.
	ErrUnknownDevice = errors.New("unknown device")
	// ErrInvalid: a malformed option or input.
	ErrInvalid = errors.New("invalid argument")
)

// Node is a character device node.
type Node struct {
	// Path is the node's path under /dev, e.g. /dev/nvidia0.
	Path string `json:"path"`
	// Major and Minor are the device numbers the node must have.
	Major uint32 `json:"major"`
	Minor uint32 `json:"minor"`
}

// Cap is one nvidia-caps capability: the proc file that describes it and,
// in the NVCapsDev style, the device node that grants it.
type Cap struct {
	// Proc is the capability file, e.g.
	// /proc/driver/nvidia/capabilities/gpu0/mig/gi1/access.
	Proc string `json:"proc"`
	// Node is /dev/nvidia-caps/nvidia-capN; nil when /proc/devices lists
	// no nvidia-caps major or the capability's minor is unknown.
	Node *Node `json:"node,omitempty"`
}

// MIGDevice is one MIG device: a compute instance inside a GPU instance.
type MIGDevice struct {
	// Index is the device's position among its parent's MIG devices: the
	// second number of a "gpu:mig" device ID.
	Index int `json:"index"`
	// Parent is the index of the GPU the device lives on.
	Parent int `json:"parent"`
	// GI and CI are the GPU and compute instance ids.
	GI int `json:"gi"`
	CI int `json:"ci"`
	// UUID is "MIG-…". Empty with the Procfs backend.
	UUID string `json:"uuid,omitempty"`
	// Profile is the MIG profile, e.g. "3g.20gb". Empty with the Procfs
	// backend.
	Profile string `json:"profile,omitempty"`
	// GIAccess and CIAccess are the access capabilities of the GPU and the
	// compute instance.
	GIAccess Cap `json:"giAccess"`
	CIAccess Cap `json:"ciAccess"`
}

// GPU is one GPU, in NVML's index order (PCI bus order).
type GPU struct {
	Index int `json:"index"`
	// Minor is the minor of /dev/nvidiaN.
	Minor uint32 `json:"minor"`
	// UUID is "GPU-…".
	UUID string `json:"uuid"`
	// BusID is the PCI address as libnvidia-container prints it:
	// %08x:%02x:%02x.0 (e.g. 00000000:07:00.0).
	BusID string `json:"busId"`
	// Model is the product name, e.g. "NVIDIA A100-SXM4-40GB".
	Model string `json:"model"`
	// Brand is NVML's brand ("Tesla", "Nvidia", …), Architecture its
	// architecture name ("Ampere"), and ComputeCapability "8.0". All three
	// are empty with the Procfs backend: the driver's proc files do not
	// carry them.
	Brand             string `json:"brand,omitempty"`
	Architecture      string `json:"architecture,omitempty"`
	ComputeCapability string `json:"computeCapability,omitempty"`
	// MIGCapable and MIGEnabled say whether the GPU supports MIG and is in
	// MIG mode. With the Procfs backend, MIGCapable means the GPU has a
	// capabilities/gpuN/mig directory and MIGEnabled that it holds at least
	// one GPU instance; a GPU in MIG mode with no instance reads as not
	// enabled.
	MIGCapable bool `json:"migCapable"`
	MIGEnabled bool `json:"migEnabled"`
	// Node is /dev/nvidiaN.
	Node Node `json:"node"`
	// ProcDir is the GPU's /proc/driver/nvidia/gpus/<bus id> directory,
	// with the 8-digit PCI domain when the driver names it so, else the
	// 4-digit one (0000:07:00.0).
	ProcDir string `json:"procDir"`
	// MIGCapsDir is /proc/driver/nvidia/capabilities/gpuN/mig for a
	// MIG-capable GPU, empty otherwise.
	MIGCapsDir string `json:"migCapsDir,omitempty"`
	// MIGMinors are the nvidia-caps minors of every GPU and compute
	// instance the GPU could hold (from mig-minors), for MIG config and
	// monitor access to the whole GPU. Empty unless MIG-capable.
	MIGMinors []uint32 `json:"migMinors,omitempty"`
	// MIGDevices are the GPU's MIG devices, when MIG is enabled.
	MIGDevices []MIGDevice `json:"migDevices,omitempty"`
}

// IMEXChannel is one /dev/nvidia-caps-imex-channels/channelN node.
type IMEXChannel struct {
	ID   uint32 `json:"id"`
	Node Node   `json:"node"`
}

// Host is what Discover found: a plain value that prints as JSON and holds
// everything a container plan needs about the host's devices.
type Host struct {
	// Backend is the backend that produced the GPUs.
	Backend Backend `json:"backend"`
	// NVMLError says why Auto did not use NVML; empty otherwise.
	NVMLError string `json:"nvmlError,omitempty"`
	// GPUs are the GPUs found. The driver and CUDA versions are not
	// here: package driver owns them (driver.Driver.Version, CUDAInfo).
	GPUs []GPU `json:"gpus"`
	// ControlNodes are /dev/nvidiactl (always, at 195:255 as
	// libnvidia-container assumes) and whichever of nvidia-uvm,
	// nvidia-uvm-tools and nvidia-modeset exist with a known major.
	ControlNodes []Node `json:"controlNodes"`
	// IMEXChannels are the channel nodes present under the dev root.
	IMEXChannels []IMEXChannel `json:"imexChannels,omitempty"`
	// NVCapsStyle says how MIG capabilities are granted; CapsMajor is the
	// nvidia-caps major (0 when /proc/devices lists none) and IMEXMajor that
	// of nvidia-caps-imex-channels.
	NVCapsStyle NVCapsStyle `json:"nvcapsStyle"`
	CapsMajor   uint32      `json:"capsMajor,omitempty"`
	IMEXMajor   uint32      `json:"imexMajor,omitempty"`
	// MIGConfig and MIGMonitor are the global MIG capabilities; nil when
	// the driver has none.
	MIGConfig  *Cap `json:"migConfig,omitempty"`
	MIGMonitor *Cap `json:"migMonitor,omitempty"`
	// Roots are the roots discovery read (Options.Roots, defaulted): the
	// driver root (where libnvidia-ml.so.1 was looked for) and the
	// host's /proc and /dev.
	Roots driver.Roots `json:"roots"`
}

// HostPath maps a path Discover reports (/dev/…, /proc/…, or a driver
// file) to where it is under the roots discovery used.
func (h *Host) HostPath(p string) string {
	switch {
	case p == "/dev" || strings.HasPrefix(p, "/dev/"):
		return filepath.Join(h.Roots.Dev, strings.TrimPrefix(p, "/dev"))
	case p == "/proc" || strings.HasPrefix(p, "/proc/"):
		return filepath.Join(h.Roots.Proc, strings.TrimPrefix(p, "/proc"))
	}
	return filepath.Join(h.Roots.Driver, p)
}

// LacksMIGUUIDs says whether some MIG device has no UUID, as when
// discovered through procfs: a MIG device named by UUID is then found
// only by discovering again with NVML (Auto).
func (h *Host) LacksMIGUUIDs() bool {
	for _, g := range h.GPUs {
		for _, m := range g.MIGDevices {
			if m.UUID == "" {
				return true
			}
		}
	}
	return false
}

// ControlNode returns the control node at path (one of DevNvidiactl,
// DevNvidiaUVM, DevNvidiaUVMTool, DevNvidiaModeset) and whether the host
// has it.
func (h *Host) ControlNode(path string) (Node, bool) {
	for _, n := range h.ControlNodes {
		if n.Path == path {
			return n, true
		}
	}
	return Node{}, false
}
