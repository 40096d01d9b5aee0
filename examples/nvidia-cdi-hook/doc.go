// Command nvidia-cdi-hook is the createContainer hook that CDI specs written
// by examples/nvidia-ctk run: it finishes a container's driver setup from
// inside the runtime, after the spec's mounts are in place.
//
//	nvidia-cdi-hook [--debug] [--quiet] update-ldcache [--folder DIR]... [--container-spec FILE]
//	nvidia-cdi-hook [--debug] [--quiet] create-symlinks [--link TARGET::LINK]... [--container-spec FILE]
//
// update-ldcache rewrites the container's /etc/ld.so.cache so that the
// loader finds the libraries in the --folder directories (with package
// ldcache, in Go: no ldconfig, neither the host's nor the container's, is
// run). create-symlinks makes each LINK a symlink to TARGET, replacing what
// is there atomically. Every path is resolved inside the container's root
// filesystem, which the hook finds from the OCI state on stdin (or in the
// --container-spec file): crun's "root" field, or root.path of the bundle's
// config.json, joined to the bundle when relative.
//
// The hook is built with CGO_ENABLED=0: a static binary has no dynamic
// loader, so LD_PRELOAD or LD_LIBRARY_PATH leaking from a container's
// environment into the hook's cannot load code into it (CVE-2025-23266).
// Generated specs also give every hook an explicit environment.
//
// As NVIDIA's nvidia-cdi-hook does, an unknown subcommand or flag prints a
// warning and exits 0, so that a spec written by a newer generator still
// runs. --ldconfig-path is accepted and ignored. NVIDIA_CTK_DEBUG=true
// in the environment is the same as --debug.
//
// # What it reads and changes
//
// It reads the OCI state (bounded, with internal/oci) and, when the state
// does not name the root (runc), the bundle's config.json. It writes only
// inside the container's root filesystem: the loader cache (or the musl
// path file) and the requested symlinks, resolved with openat2
// RESOLVE_IN_ROOT so that links the image planted cannot lead out. It
// needs write access to the rootfs (the runtime runs it as root) and
// Linux 5.6 for openat2 (pathrs-lite is the fallback).
//
// # When not to use it
//
// It implements update-ldcache and create-symlinks only; NVIDIA's other
// hooks (enable-cuda-compat, chmod, disable-device-node-modification, …)
// are accepted and skipped with a warning. Specs from examples/nvidia-ctk
// carry enable-cuda-compat and disable-device-node-modification too, as
// the toolkit's do: with this hook, CUDA forward compatibility is not
// decided at create time and the container's /proc/driver/nvidia/params is
// not masked. nvidia-container-runtime-hook is the prestart hook.
package main
