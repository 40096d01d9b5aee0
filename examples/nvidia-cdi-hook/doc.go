//go:build !cgo

// Command nvidia-cdi-hook is the createContainer hook that CDI specs written
// by examples/nvidia-ctk run: it finishes a container's driver setup from
// inside the runtime, after the spec's mounts are in place.
//
//	nvidia-cdi-hook [--debug] [--quiet] create-symlinks [--link TARGET::LINK]... [--container-spec FILE]
//	nvidia-cdi-hook [--debug] [--quiet] enable-cuda-compat --host-driver-version VERSION [--container-spec FILE]
//	nvidia-cdi-hook [--debug] [--quiet] update-ldcache [--folder DIR]... [--container-spec FILE]
//	nvidia-cdi-hook [--debug] [--quiet] disable-device-node-modification [--proc-root DIR] [--container-spec FILE]
//
// The generated specs run them in that order, as the NVIDIA Container
// Toolkit's do:
//
//   - create-symlinks makes each LINK a symlink to TARGET with Apply's
//     rule (package internal/liblink, shared code): a SONAME link
//     (libnvidia-ml.so.1 -> libnvidia-ml.so.550.54.15) replaces a symlink
//     the image has there atomically, and a regular file or directory the
//     image ships there is an error naming it; any other link (libcuda.so)
//     keeps what the image has at its path, and the log names it.
//   - enable-cuda-compat looks for the image's CUDA forward-compatibility
//     library: when /usr/local/cuda/compat holds exactly one regular file
//     libcuda.so.X.Y.Z and X is greater than the host driver's major
//     version, it writes /etc/ld.so.conf.d/00-compat-nvidia-cdi-hook.conf
//     naming that directory; otherwise it writes nothing. Every run
//     converges (every container start runs it again on the same writable
//     layer): entries of earlier runs, of this hook's older versions
//     (00-compat-<12 hex>.conf) and of NVIDIA's (00-compat-<uuid>.conf)
//     that name only the compat dir are removed, so after the host driver
//     is upgraded past the compat library none is left to put the older
//     libcuda.so.1 first (TestCompatConverges). It mounts nothing (mounting an image's libraries was
//     CVE-2024-0132 and CVE-2025-23359). Unlike the toolkit's, it does not
//     read the library's .note.cuda.fwd_compatibility ELF note.
//   - update-ldcache rewrites the container's /etc/ld.so.cache (with
//     package ldcache, in Go: no ldconfig, neither the host's nor the
//     container's, is run), scanning the directories of the
//     00-compat-*.conf files first, then the --folder directories, then
//     the image's own configuration, so that a newer compat libcuda.so.1
//     wins over the driver's.
//   - disable-device-node-modification reads the host's
//     <proc-root>/driver/nvidia/params (default /proc, a host path; the
//     hook runs before pivot_root, where /proc is still the host's) and,
//     when it says ModifyDeviceFiles: 1, mounts a copy saying 0 over the
//     container's /proc/driver/nvidia/params, so that libnvidia-ml in the
//     container does not create device nodes. The copy is a file in a
//     private tmpfs (fsopen, fsmount) of its own size, cloned with
//     open_tree and mounted read-only, nosuid, nodev and noexec with
//     move_mount onto the target's descriptor. Older kernels refuse to
//     clone from a detached tmpfs (EINVAL; 6.18 allows it); there the
//     tmpfs is attached over /proc/driver/nvidia for the moment of the
//     clone and detached again (the container has not started, nothing
//     sees it).
//
// Every path in the container is resolved inside its root filesystem,
// which the hook finds from the OCI state on stdin (or in the
// --container-spec file): crun's "root" field, or root.path of the bundle's
// config.json, joined to the bundle when relative. The hook reads its
// stdin to the end on every path, so that the runtime never writes the
// state into a closed pipe.
//
// The hook must be built with CGO_ENABLED=0:
//
//	CGO_ENABLED=0 go build -o /usr/bin/nvidia-cdi-hook ./examples/nvidia-cdi-hook
//
// A static binary has no dynamic loader, so LD_PRELOAD or LD_LIBRARY_PATH
// leaking from a container's environment into the hook's cannot load code
// into it (CVE-2025-23266). A cgo build cannot be made: every file of this
// package, tests included, is constrained to !cgo, so with cgo on (the go
// command's default where a C compiler is found) `go build
// ./examples/nvidia-cdi-hook` fails with "build constraints exclude all Go
// files". A check at run time would come too late: the loader runs an
// LD_PRELOAD constructor before main. Patterns such as `go build ./...`
// and `go vet ./...` skip a package whose files are all excluded, so they
// still work with cgo on and leave this one out; vet and test it with
// CGO_ENABLED=0 (the Makefile and .ci/run do). TestShippedHookIsStatic
// builds the hook as above and checks that it has no PT_INTERP and no
// DT_NEEDED, and that a cgo build fails. Generated specs also give every
// hook an explicit environment.
//
// As NVIDIA's nvidia-cdi-hook does, an unknown subcommand or flag prints a
// warning and exits 0, so that a spec written by a newer generator still
// runs. --ldconfig-path is accepted and ignored. NVIDIA_CTK_DEBUG=true
// in the environment is the same as --debug.
//
// # What it reads and changes
//
// It reads the OCI state (bounded, with internal/oci) and, when the state
// does not name the root (runc), the bundle's config.json; the host's
// driver params. It writes only inside the container's root filesystem:
// the loader cache (or the musl path file), the requested symlinks and
// the compat configuration, resolved with openat2 RESOLVE_IN_ROOT so that
// links the image planted cannot lead out; and it adds one mount, over
// the container's params, in the mount namespace it runs in (the
// container's, for a createContainer hook). It needs root (write access
// to the rootfs, CAP_SYS_ADMIN for the mount), Linux 5.6 for openat2
// (pathrs-lite is the fallback) and Linux 5.12 for the params mount
// (without the new mount API it warns and leaves params alone).
//
// # When not to use it
//
// NVIDIA's other hooks (chmod, update-application-profile, …) are accepted
// and skipped with a warning. nvidia-container-runtime-hook is the
// prestart hook of the legacy (non-CDI) flow.
package main
