//go:build !cgo

// Command nvidia-cdi-hook is the createContainer hook that CDI specs written
// by examples/nvidia-ctk run: it finishes a container's driver setup from
// inside the runtime, after the spec's mounts are in place. It is flag
// parsing and logging over package nvcontainer/cdihook, which does the work
// and documents each action, its rules and its security.
//
//	nvidia-cdi-hook [--debug] [--quiet] create-symlinks [--link TARGET::LINK]... [--container-spec FILE]
//	nvidia-cdi-hook [--debug] [--quiet] enable-cuda-compat --host-driver-version VERSION [--container-spec FILE]
//	nvidia-cdi-hook [--debug] [--quiet] update-ldcache [--folder DIR]... [--container-spec FILE]
//	nvidia-cdi-hook [--debug] [--quiet] disable-device-node-modification [--proc-root DIR] [--container-spec FILE]
//
// The generated specs run them in that order, as the NVIDIA Container
// Toolkit's do. The container's root comes from the OCI state on stdin
// (or in the --container-spec file), as cdihook.ContainerRoot finds it.
// The hook reads its stdin to the end on every path, so that the runtime
// never writes the state into a closed pipe.
//
// The hook must be built with CGO_ENABLED=0:
//
//	CGO_ENABLED=0 go build -o /usr/bin/nvidia-cdi-hook ./examples/nvidia-cdi-hook
//
// A static binary has no dynamic loader, so LD_PRELOAD or LD_LIBRARY_PATH
// leaking from a container's environment into the hook's cannot load code
// into it (CVE-2025-23266); generated specs also give every hook an
// explicit environment. A cgo build cannot be made: every file of this
// package, tests included, is constrained to !cgo, so with cgo on `go
// build ./examples/nvidia-cdi-hook` fails with "build constraints exclude
// all Go files" (a check at run time would come after an LD_PRELOAD
// constructor ran), and `go build ./...` or `go vet ./...` skip it; vet
// and test it with CGO_ENABLED=0, as the Makefile and .ci/run do.
//
// As NVIDIA's nvidia-cdi-hook does, an unknown subcommand or flag prints a
// warning and exits 0, so that a spec written by a newer generator still
// runs; NVIDIA's other hooks (chmod, update-application-profile, …) are
// skipped so. --ldconfig-path is accepted and ignored: no ldconfig is run.
// NVIDIA_CTK_DEBUG=true in the environment is the same as --debug. Errors
// go to stderr and exit 1.
//
// It needs root, Linux 5.6 and, to mask params, Linux 5.12 (see package
// cdihook). The legacy (non-CDI) flow uses nvidia-container-runtime-hook.
package main
