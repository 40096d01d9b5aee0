// Package cdihook holds the createContainer hook actions that CDI specs call
// (the subcommands of NVIDIA's nvidia-cdi-hook), as functions a hook
// program or a runtime calls with the container's root filesystem:
//
//   - [CreateSymlinks] makes each [Link] a symlink in the container with
//     the rule Apply (package nvcontainer) uses: a SONAME link
//     (libnvidia-ml.so.1 -> libnvidia-ml.so.550.54.15) is created, or
//     replaces a symlink the image has there atomically, and a regular
//     file or directory the image ships there is an error naming it; any
//     other link (libcuda.so) keeps what the image has at its path, and
//     the result lists it in Kept.
//   - [EnableCUDACompat] applies the CUDA forward-compatibility rule below:
//     when it holds, it writes /etc/ld.so.conf.d/00-compat-nvidia-cdi-hook.conf
//     naming /usr/local/cuda/compat; otherwise it writes nothing. It
//     mounts nothing.
//   - [UpdateLDCache] rewrites the container's /etc/ld.so.cache (with
//     package ldcache, in Go), scanning the directories of the
//     00-compat-*.conf files first, then the folders given, then the
//     image's own configuration, so that a newer compat libcuda.so.1 wins
//     over the driver's. In the same scan it makes the SONAME links of
//     the libraries in the compat dirs and folders
//     (libnvidia-egl-wayland.so.1), as the toolkit's ldconfig run does;
//     the image's own dirs are left.
//   - [Chmod] sets the mode of the paths given (NVIDIA's chmod hook, for
//     /dev/dri under crun), never following a link the image planted.
//   - [UpdateApplicationProfile] writes the driver's application profile
//     limiting EGL and Vulkan to the container's /dev/nvidiaN GPUs.
//   - [DisableDeviceNodeModification] reads the host's
//     <ProcRoot>/driver/nvidia/params and, when it says
//     ModifyDeviceFiles: 1, mounts a copy saying 0 over the container's
//     /proc/driver/nvidia/params, so that libnvidia-ml in the container
//     does not create device nodes.
//
// Generated specs run them in that order. [ContainerRoot] finds the root
// filesystem from the OCI state a runtime writes to a hook's stdin: crun's
// "root" field, or root.path of the bundle's config.json, joined to the
// bundle when relative; a root of "/" is refused, so that no action ever
// rewrites the host's own files.
//
// # The CUDA compat rule
//
// Compat is considered when the compat dir (/usr/local/cuda/compat or
// the one given, resolved inside the root, symlinked parents included)
// holds exactly one regular file named libcuda.so.X.Y.Z. Symlinks,
// directories and FIFOs of that name are not libraries; two libraries is
// no compat (which one the loader should take is unknown). As in the
// NVIDIA Container Toolkit, the library's .note.cuda.fwd_compatibility
// ELF note (owner "NVIDIA Corporation", JSON listing the CUDA version and
// the driver majors it supports) decides when present: compat is used
// when the host driver's major is listed and X.Y.Z is greater than the
// host driver's version, or, given only the host's CUDA version, when the
// note's CUDA version is greater. Without a note, compat is used when X
// is greater than the host driver's major, and never on a CUDA version
// alone. The library is read only after its O_PATH descriptor showed a
// regular file, never following a link. Every run converges,
// as every container start runs the hooks again on the same writable
// layer: the entries of earlier runs, of this hook's older versions
// (00-compat-<12 hex>.conf) and of NVIDIA's (00-compat-<uuid>.conf) that
// name only the compat dir are removed, so that after the host driver is
// upgraded past the compat library none is left to put the older
// libcuda.so.1 first. The planner of package nvcontainer, which sees
// the image before the container starts, has its own modes (mount,
// ldconfig, disabled) and compares every compat library with the driver.
//
// # Security
//
// Nothing the image or the state says is trusted:
//
//   - Every path in the container is resolved inside its root
//     (openat2 RESOLVE_IN_ROOT, or filepath-securejoin's walk on kernels
//     without it, through internal/inroot and internal/rootfs), so links
//     the image planted cannot lead out, and writes (the cache, the
//     compat entry, the links) are created beside their target and renamed
//     over it within a directory opened inside the root.
//   - A file is read only after it was opened O_PATH and fstat showed a
//     regular file (internal/inroot): a FIFO planted at a configuration
//     path cannot block the hook, a device node is never opened. The
//     host's params file is read the same way.
//   - No ldconfig is run, neither the host's nor the container's: the cache
//     is written in Go.
//   - The copy of params is a file in a private tmpfs (fsopen, fsmount) of
//     its own size, cloned with open_tree and mounted read-only, nosuid,
//     nodev and noexec with move_mount onto the target's descriptor,
//     never by path. Older kernels refuse to clone from a detached tmpfs
//     (EINVAL); there the tmpfs is attached over /proc/driver/nvidia for
//     the moment of the clone and detached again.
//   - The state and each configuration file are read with a size bound.
//
// # What it reads and changes, and what it needs
//
// The actions write only inside the container's root filesystem, except
// [DisableDeviceNodeModification], which adds one mount in the mount
// namespace of the calling thread: call it where the container's mount
// namespace is current and the host's /proc is still visible, as it is
// for a createContainer hook (before pivot_root). They need root (write
// access to the rootfs, CAP_SYS_ADMIN for the mount), Linux 5.6 for
// openat2 (filepath-securejoin is the fallback) and Linux 5.12 for the
// params mount (without the new mount API nothing is masked, and the
// result says so).
//
// The package needs no cgo, so that a hook built on it can be a static
// binary: a binary without a dynamic loader cannot be made to load an
// LD_PRELOAD library from a container's environment (CVE-2025-23266).
// It does not log; the results say what was done and what was left.
//
// # When not to use it
//
// It is for CDI's createContainer hooks. Without CDI, nvcontainer's Plan
// and Apply configure a container in one step (the legacy prestart flow)
// and need none of these actions.
package cdihook
