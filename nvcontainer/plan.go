package nvcontainer

import (
	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// PlanVersion is the version of the plan's JSON layout. It changes only when
// a field changes meaning or is removed; new fields may appear within a
// version.
const PlanVersion = 1

// Host is what NewPlan knows of the host: the opened driver and the
// discovered devices. Both are required.
type Host struct {
	Driver  *driver.Driver
	Devices *devices.Host
	// NVML, when set, is the NVML to hand PlanOptions.NVML for plans of
	// this host: [PrepareHostFor] sets it to an NVML loaded only on first
	// use. Nil: none.
	NVML devices.NVMLInterface
}

// PlanOptions are the configure options that are not part of a request
// (nvidia-container-cli configure flags and driver options). A nil
// *PlanOptions means defaults.
type PlanOptions struct {
	// NoCgroups plans no device cgroup rules (--no-cgroups). False: rules.
	NoCgroups bool
	// NoDevbind plans no device node mounts; cgroup rules are still
	// planned (--no-devbind), and so is the /dev/nvidia-caps directory
	// of mig-config/mig-monitor "all", which libnvidia-container binds
	// regardless. False: nodes are bind-mounted.
	NoDevbind bool
	// GOARCH selects the container library directories (multiarch
	// triplet, lib32 rules). Empty: runtime.GOARCH.
	GOARCH string
	// ProcRoot is the procfs Container.PID is found in. With a PID, the
	// rootfs is inspected as that process sees it, through
	// <ProcRoot>/<PID>/root<Rootfs> (libnvidia-container's supervised
	// mode), so mounts the runtime made in the container's mount
	// namespace before the hook (a volume at /usr/local/cuda or /etc)
	// count. A standalone caller, running inside the container's
	// namespaces, passes what it gives ApplyOptions.ProcRoot
	// (ROOTFS/proc). Without a PID (or in ModeRootfsOnly) the rootfs is
	// read at its path.
	// Empty: "/proc".
	ProcRoot string
	// NVML, when set, is asked for the facts a requirement needs and the
	// host's discovery lacked (brand, compute capability, an exact CUDA
	// version), and only when a requirement fails on one of them: a host
	// discovered through procfs starts NVML for the few containers whose
	// requirements need it. NewPlanContext's context bounds the query
	// (NVMLQueryTimeout when it has no deadline). Nil: never asked.
	NVML devices.NVMLInterface
}

// Plan is every change configuring one container needs, computed before
// anything is changed. It is a plain value: deterministic for the same
// host, request and rootfs, JSON-printable in a documented, stable layout
// (see PlanVersion), and the single source of truth for Apply, the CDI spec,
// nvidia-container-cli list and a dry run.
//
// Every path in Target, Path and Dirs fields is a path inside the
// container's rootfs; every Source is a host path.
//
// NewPlan makes plans; Plan.JSON prints one in the layout the package
// documentation describes ("The plan as JSON") and ParsePlan reads it back;
// package cdispec writes one as a CDI spec (cdispec.FromPlan).
type Plan struct {
	// Version is PlanVersion.
	Version int `json:"version"`
	// Container is the container planned for.
	Container Container `json:"container"`
	// Driver holds the host driver's facts.
	Driver PlanDriver `json:"driver"`
	// Capabilities are the requested classes, before implications. Empty:
	// no class, as in the Request.
	Capabilities capabilities.Set `json:"capabilities"`
	// Layout is where files go in this rootfs.
	Layout Layout `json:"layout"`
	// GPUs and MIGDevices are the selected devices.
	GPUs       []PlannedGPU `json:"gpus"`
	MIGDevices []PlannedMIG `json:"migDevices,omitempty"`
	// Requirements are the checked NVIDIA_REQUIRE_* expressions; a plan
	// exists only when all of them hold.
	Requirements []string `json:"requirements,omitempty"`
	// Tmpfs are the tmpfs mounts to create and populate: the
	// /proc/driver/nvidia mask and, with graphics, the application
	// profile dir. They are applied first.
	Tmpfs []Tmpfs `json:"tmpfs"`
	// Mounts are the bind mounts, in the order they are applied.
	Mounts []Mount `json:"mounts"`
	// Symlinks are created after the mounts.
	Symlinks []Symlink `json:"symlinks,omitempty"`
	// CgroupRules are added to the container's device cgroup. Empty with
	// PlanOptions.NoCgroups.
	CgroupRules []DeviceRule `json:"cgroupRules,omitempty"`
	// LDCache is the loader cache update, done last.
	LDCache LDCacheUpdate `json:"ldcache"`
	// CUDACompat records the CUDA forward-compatibility decision.
	CUDACompat CUDACompat `json:"cudaCompat"`
	// Warnings are facts a user should see that did not stop the plan
	// (a missing library, a missing IMEX channel node).
	Warnings []string `json:"warnings,omitempty"`
}

// PlanDriver holds the host driver's facts a plan depends on.
type PlanDriver struct {
	// Root is the driver root on the host.
	Root string `json:"root"`
	// Version is the NVRM version, e.g. "550.54.15".
	Version string `json:"version"`
	// CUDAVersion is "MAJOR.MINOR"; empty when unknown (no NVML).
	CUDAVersion string `json:"cudaVersion,omitempty"`
}

// Layout is where driver files go in a rootfs (libnvidia-container's directory rules).
type Layout struct {
	// Debian is set when the rootfs has /etc/debian_version.
	Debian bool `json:"debian"`
	// LibDir, Lib32Dir and BinDir are the container directories for
	// libraries, 32-bit libraries and binaries.
	LibDir   string `json:"libDir"`
	Lib32Dir string `json:"lib32Dir"`
	BinDir   string `json:"binDir"`
	// HostPaths is set for a plan made without a rootfs (Container.Rootfs
	// empty), as for a CDI spec: libraries then keep their host paths
	// (LibDir and Lib32Dir name the directory of the first one), as the
	// NVIDIA Container Toolkit's CDI specs do.
	HostPaths bool `json:"hostPaths,omitempty"`
}

// PlannedGPU is a selected GPU.
type PlannedGPU struct {
	Index int    `json:"index"`
	Minor uint32 `json:"minor"`
	UUID  string `json:"uuid"`
	BusID string `json:"busId"`
	// MIGEnabled is set when the GPU is in MIG mode: selected whole, or
	// as a selected MIG device's parent, it gets its /dev/nvidiaN only.
	MIGEnabled bool `json:"migEnabled,omitempty"`
}

// PlannedMIG is a selected MIG device.
type PlannedMIG struct {
	// Index is the device's position among its parent's MIG devices
	// (the "gpu:mig" ID is Parent:Index).
	Index  int    `json:"index"`
	Parent int    `json:"parent"`
	GI     int    `json:"gi"`
	CI     int    `json:"ci"`
	UUID   string `json:"uuid,omitempty"`
}

// MountKind says what a mount is for; it decides the mount flags.
type MountKind string

// The kinds of mount, with their flags (as libnvidia-container mounts them).
const (
	MountLibrary   MountKind = "library"     // ro,nosuid,nodev
	MountLibrary32 MountKind = "library32"   // ro,nosuid,nodev
	MountBinary    MountKind = "binary"      // ro,nosuid,nodev
	MountFirmware  MountKind = "firmware"    // ro,nosuid,nodev
	MountConfig    MountKind = "config"      // ro,nosuid,nodev: ICD and vendor files
	MountCompat    MountKind = "cuda-compat" // ro,nosuid,nodev: image compat libs (mount mode)
	MountIPC       MountKind = "ipc"         // nosuid,nodev,noexec (read-write)
	MountDevice    MountKind = "device"      // ro,nosuid,noexec
	MountProc      MountKind = "proc"        // ro,nosuid,nodev,noexec: gpus/<busid>, MIG caps
	MountCapsDir   MountKind = "caps-dir"    // nosuid,noexec: /dev/nvidia-caps (mig-config/monitor all)
)

// Mount is one bind mount of a host file or directory into the container.
type Mount struct {
	Kind MountKind `json:"kind"`
	// Source is the host path; it must not be a symlink.
	Source string `json:"source"`
	// Target is the path inside the rootfs, created as an empty file,
	// directory or node of the source's type when missing.
	Target string `json:"target"`
	// Options are the mount flags, in the order ro, nosuid, nodev, noexec.
	Options []string `json:"options"`
	// Dir is set when the source is a directory.
	Dir bool `json:"dir,omitempty"`
	// Device is the major:minor a device node source must have; nil for
	// other kinds.
	Device *DeviceNumber `json:"device,omitempty"`
	// ImagePath is set for a cuda-compat mount: the library's path inside
	// the container's rootfs. Apply opens it there, in the container's
	// mount namespace with in-root resolution, never by Source (which
	// only names it on the host as the plan saw it).
	ImagePath string `json:"imagePath,omitempty"`
	// For is the selected device the mount exists for, as its index ID
	// ("0" for a GPU, "1:0" for a MIG device), or the comma-separated
	// IDs of the devices that share it ("1:0,1:1": two compute instances
	// of one GPU instance share its access node); empty for what every
	// device shares (driver files, control nodes, MIG config/monitor,
	// IMEX channels).
	For string `json:"for,omitempty"`
}

// DeviceNumber is a character device's major:minor.
type DeviceNumber struct {
	Major uint32 `json:"major"`
	Minor uint32 `json:"minor"`
}

// Tmpfs is a tmpfs mounted at Target, holding Files and, bound inside it,
// Mounts (whose Targets lie under Target).
type Tmpfs struct {
	Target  string      `json:"target"`
	Mode    uint32      `json:"mode"`
	Options []string    `json:"options"`
	Files   []TmpfsFile `json:"files"`
	Mounts  []Mount     `json:"mounts,omitempty"`
}

// TmpfsFile is a file written into a tmpfs before it is mounted.
type TmpfsFile struct {
	// Name is relative to the tmpfs root.
	Name    string `json:"name"`
	Mode    uint32 `json:"mode"`
	Content string `json:"content"`
}

// Symlink is a symbolic link to create in the rootfs.
type Symlink struct {
	// Path is where the link is; Target is its content, written verbatim.
	Path   string `json:"path"`
	Target string `json:"target"`
	// Replace is set for a SONAME link (libcuda.so.1 → libcuda.so.<version>),
	// which ldconfig would make: Apply points it at Target even where the
	// image already has a symlink there (a stale one from a committed GPU
	// container), replacing that link atomically and putting it back on
	// undo; a file or directory there is an error. Unset, for the extra
	// links of libnvidia-container (libcuda.so, libGLX_indirect.so.0,
	// libnvidia-opticalflow.so) and the toolkit (gbm/nvidia-drm_gbm.so):
	// whatever the image has at Path is kept, as libnvidia-container keeps
	// it (Mesa's libGLX_indirect.so.0, a CUDA image's libcuda.so stub link).
	Replace bool `json:"replace,omitempty"`
	// For names the device a link belongs to ("0"), as Mount.For: a GPU's
	// /dev/dri/by-path links. Empty: every device's (a library link).
	For string `json:"for,omitempty"`
}

// DeviceRule allows access to a character device in the device cgroup.
type DeviceRule struct {
	Type   string `json:"type"` // "c"
	Major  uint32 `json:"major"`
	Minor  uint32 `json:"minor"`
	Access string `json:"access"` // "rw"
}

// LDCacheUpdate is the rewrite of the container's ld.so.cache.
type LDCacheUpdate struct {
	// FirstDirs are searched before everything else (the CUDA
	// forward-compatibility dir in ldconfig mode).
	FirstDirs []string `json:"firstDirs,omitempty"`
	// Dirs are added to the rootfs's own search dirs: the library dirs
	// files were mounted into.
	Dirs []string `json:"dirs"`
}

// CUDACompat records what was decided about the image's CUDA
// forward-compatibility libraries (/usr/local/cuda/compat).
type CUDACompat struct {
	// Mode is the mode used: "mount", "ldconfig" or "disabled".
	Mode request.CUDACompatMode `json:"mode"`
	// Dir is the compat dir found in the image; empty when none.
	Dir string `json:"dir,omitempty"`
	// Libraries are the image's compat libcuda files considered.
	Libraries []string `json:"libraries,omitempty"`
	// Used is set when the compat libraries take effect.
	Used bool `json:"used"`
	// Reason says why they are used or not.
	Reason string `json:"reason,omitempty"`
}
