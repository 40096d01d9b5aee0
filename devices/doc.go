// Package devices finds a host's NVIDIA GPUs, MIG devices, IMEX channels and
// control nodes, selects them by the device IDs NVIDIA_VISIBLE_DEVICES and
// nvidia-container-cli --device accept, and creates missing device nodes.
//
// # What it reads
//
// [Discover] has two backends that return the same [Host] value:
//
//   - NVML, through the package's own narrow [NVMLInterface] (plain Go
//     types): an injected one, or, in a cgo build, libnvidia-ml.so.1 loaded
//     from the driver root through github.com/NVIDIA/go-nvml. Init and
//     Shutdown are paired inside the call.
//   - Procfs, without NVML: /proc/driver/nvidia/gpus/*/information and
//     /proc/driver/nvidia/capabilities (/proc/driver/nvidia/version only
//     says the driver is loaded). It is the fast path (NVML start-up
//     costs hundreds of milliseconds on multi-GPU hosts without persistence
//     mode) and leaves empty what only NVML knows: Brand, Architecture,
//     ComputeCapability, and the UUID and Profile of MIG devices. Its MIG devices are the capabilities/gpuN/mig/giG/ciC
//     directories the driver creates for live instances.
//
// [Auto] uses NVML when the library loads and initialises, Procfs otherwise,
// and records in Host.Backend which one it used. On WSL2 (/dev/dxg under the
// dev root) every backend gives way to [WSL]: no procfs, no NVML, /dev/dxg
// the one control node. Both backends take the
// device majors from /proc/devices, the nvidia-caps minors from
// /proc/driver/nvidia-caps/mig-minors, and the presence of nvidia-uvm,
// nvidia-modeset and IMEX channel nodes from /dev. The proc, dev and driver
// roots are options (Options.Roots, a driver.Roots defaulted as package
// driver defaults it), so tests and the example CLI run against a
// generated host; as in libnvidia-container, /dev is looked up inside the
// driver root (the dev root defaults to <driver root>/dev) while procfs is
// the running kernel's.
//
// The driver and CUDA versions are not device facts: package driver
// alone reads them (driver.Driver.Version, CUDAInfo). To have NVML give
// them without starting it twice, open the driver inside discovery's NVML
// session with Options.WithNVML, as nvcontainer.OpenHost does.
//
// Discovery needs no privileges and changes nothing. [CreateNodes] (the
// host side of nvidia-container-cli --load-kmods) does: it needs root, or
// CAP_MKNOD and CAP_CHOWN (and CAP_SYS_MODULE to load modules), and does
// nothing inside a user namespace; under a driver root other than "/" it
// runs modprobe chrooted into that root and makes the nodes in its dev
// directory. It follows nvidia-modprobe's rules: modprobe only when the
// sysfs root (driver.Roots.Sys) lists an NVIDIA display controller
// ([PCIDevices], [PCIDevice.NVIDIADisplay]), nodes only for the modules
// loaded. [Host.DRM] reads a GPU's /dev/dri nodes from the same sysfs.
// Device nodes are Linux concepts; the package targets Linux.
//
// # Building without cgo
//
// The package builds with CGO_ENABLED=0 (static runtimes, shims and hooks
// import it): only the files that load libnvidia-ml.so.1 and adapt go-nvml
// ([NewNVMLFromGoNVML]) need cgo. A static build discovers through procfs:
// Auto falls back to Procfs with Host.NVMLError saying the build has no
// cgo, and Backend NVML fails with [ErrNVMLUnavailable] saying the same,
// unless Options.NVML is given. To have NVML's facts there, ship the helper
// examples/nvc-nvml (built with cgo) beside the binary and give
// [NewNVMLHelper]'s client as Options.NVML (through package nvcontainer:
// HostOptions.NVML); see "NVML in a helper process".
//
// # NVML runs in the caller's process
//
// The NVML backend (and Auto, when it picks NVML) loads the driver root's
// libnvidia-ml.so.1 into the calling process: the library's constructors
// run when it is loaded and its code on every NVML call, with the caller's
// privileges (root, for a runtime hook). libnvidia-container does not do
// this: it runs NVML in a helper process chrooted into the driver root,
// with no capabilities, as an unprivileged user. Discover resolves the
// library inside the driver root (openat2 RESOLVE_IN_ROOT), refuses
// anything but a regular file, loads it through the descriptor it opened
// (/proc/thread-self/fd/N, so no symlink or rename can substitute another
// file), and refuses a library that lacks a function discovery calls
// (go-nvml binds lazily, and a missing function would abort the process),
// but it cannot make the library's code harmless. The library's own
// dependencies (libc, libm) come from the host's loader path, not from the
// driver root, and go-nvml ties a process to the first NVML library it
// calls into, so one process should discover through one driver root.
//
// The Procfs backend runs no driver code at all. Callers that do not trust
// the driver root (one they did not install, or one others can write to)
// should use Backend Procfs, or inject an NVMLInterface they trust, such
// as [NewNVMLHelper]'s, which runs the library's code in an unprivileged
// process.
//
// # NVML in a helper process
//
// [NewNVMLHelper] is the other way, for any build (and the only NVML of a
// build without cgo): an NVMLInterface that, at its first Init, runs a
// helper program (examples/nvc-nvml) as an unprivileged user, hands it the
// library found inside the driver root by descriptor, and reads back an
// [NVMLSnapshot] (JSON) of every answer discovery and package driver ask
// ([TakeNVMLSnapshot], the helper's side); every call is then answered
// from it. The helper drops every capability and sets
// PR_SET_NO_NEW_PRIVS before the library is loaded, as
// libnvidia-container's NVML process does (it does not chroot). A helper
// that fails, hangs past its timeout (10 s by default) or answers
// something else makes Init fail, and Auto falls back to Procfs.
// [FindNVMLHelper] is where nvc's programs look for the helper
// ($NVC_NVML_HELPER, next to the executable, then PATH). The helper
// inherits its caller's environment.
//
// # Selecting devices
//
// [Host.Select] takes libnvidia-container's ID list ("all", indices,
// GPU-/MIG- UUIDs, PCI bus ids, "gpu:mig"); [Host.SelectMIGConfig] and
// [Host.SelectMIGMonitor] take the --mig-config and --mig-monitor lists.
// Environment semantics ("none", "void", unset) belong to the caller.
//
// # When not to use it
//
// It does not touch a container: mounting the nodes it reports, cgroup
// device rules and CDI output are package nvcontainer's.
package devices
