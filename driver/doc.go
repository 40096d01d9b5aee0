// Package driver finds what the host's NVIDIA driver provides to a
// container: its version, and the files each capability class needs —
// libraries (native and 32-bit), binaries, IPC sockets and the MPS pipe
// directory, GSP firmware, and ICD, vendor and X configuration files.
//
// It follows libnvidia-container (nvc_info.c, ldcache.c): libraries are
// found only through the host's ld.so.cache, by prefix of the list names
// ("libcuda.so" matches libcuda.so.1 and libcuda.so), and of the cache's
// candidates for a name the last that passes wins. A candidate passes when
// the file its path resolves to is named "<something>.<driver version>", is
// an ELF shared object of the architecture's class, carries the 2.3.99 ABI
// note if it is libnvidia-tls, and needs libnvidia-glcore or
// libnvidia-eglcore if it is a non-GLVND GL library (so Mesa's libGL is
// never taken). On WSL (/dev/dxg exists) the first candidate is taken
// without checks and one from /usr/lib/wsl/lib is never replaced; the
// driver store files (Files.DriverStore, see Driver.WSLDriverStore) are
// added whatever the capabilities, and without NVML the version comes from
// the store's nv_dispi.inf. Missing files are warnings in the result, not
// errors.
//
// With graphics it also gives what the NVIDIA Container Toolkit adds and
// libnvidia-container lacks: the EGL external platform libraries
// (libnvidia-egl-gbm, -wayland, -wayland2, -xcb, -xlib), versioned apart
// from the driver and so taken by their own rule (a native shared object
// named "<name>.X.Y…", no warning when missing), and ICD, vendor and X
// configuration files — an EGL platform file only with the library it
// names.
//
// # Reading, not changing
//
// The package only reads. Open reads the version — from NVML when an
// [NVMLVersions] is given, else from <proc>/driver/nvidia/version, else
// from the libcuda.so.<version> file name the cache leads to — and parses
// the ld.so.cache once. Files then resolves paths; it can be called any
// number of times, concurrently. Nothing is mounted, nothing is executed,
// NVML is never loaded by the package itself (in a cgo build, pass
// devices.NewNVMLFromGoNVML(nvml.New()) to use the real library). The
// package needs no cgo.
//
// # The host's roots
//
// [Roots] names the driver root, procfs, /dev and the ld.so.cache once;
// [Roots.WithDefaults] is the one defaulting rule (the dev root is
// <driver root>/dev, as libnvidia-container looks device nodes up inside
// --root), used by this package, package devices and package nvcontainer
// alike. The package is the one source of the driver version and the CUDA
// driver version ([Driver.Version], [Driver.CUDAInfo]): package devices
// reads neither.
//
// # Paths inside the driver root
//
// Every path — the cache, its entries, binaries, sockets, firmware — is
// resolved inside the driver root as if it were "/", with
// openat2(RESOLVE_IN_ROOT) (Linux 5.6 and later) or, on older kernels,
// filepath-securejoin's emulation: a symlink in the root never leads out
// of it. No privilege is needed beyond read access to the files; procfs
// must be mounted (the resolved path of a directory reached through a
// symlink is read from /proc/thread-self/fd).
//
// # Speed
//
// A Files call opens each directory it looks in once (a path without
// symlinks with RESOLVE_NO_SYMLINKS, whose resolved path is then the path
// itself), looks at names with one fstatat through the directory's
// descriptor, and keeps, across calls, ELF facts by file identity and
// symlink targets and missing names by directory (see Driver.Files), so
// that a repeated call on an unchanged host makes about 170 system calls
// for every capability.
//
// # When not to use it
//
// It describes the host side only. What a container gets, and where, is
// package nvcontainer's plan; device nodes are package devices'. It does not
// look for libraries outside the ld.so.cache (NixOS, drivers under
// directories ld.so.conf does not list), as libnvidia-container does not,
// with two exceptions: a driver root without an ld.so.cache is scanned as
// ldconfig would scan it, over [StandardLibraryDirs] (the NVIDIA Container
// Toolkit's search dirs), and Options.ToolkitLibraries adds what the
// toolkit's CDI discovery finds beyond libnvidia-container's rules
// (vdpau/libvdpau_nvidia.so.<version>, libnvidia-nvvm70.so.*).
package driver
