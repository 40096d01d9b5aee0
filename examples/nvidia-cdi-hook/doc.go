//go:build !cgo

// Command nvidia-cdi-hook is the createContainer hook that CDI specs run
// (NVIDIA's nvidia-cdi-hook, same subcommands and flags): flag parsing and
// logging over package nvcontainer/cdihook, which does the work and
// documents each action, its rules and its security.
//
//	nvidia-cdi-hook [--debug] [--quiet] COMMAND [flags] [--container-spec FILE]
//	  create-symlinks --link TARGET::LINK...
//	  enable-cuda-compat --host-driver-version V --host-cuda-version V --cuda-compat-container-root DIR
//	  update-ldcache --folder DIR...
//	  chmod --mode OCTAL --path PATH...
//	  disable-device-node-modification [--proc-root DIR]
//	  update-application-profile
//
// The container's root comes from the OCI state on stdin (or the file),
// which is read to its end on every path. Build it with CGO_ENABLED=0:
// a static binary has no dynamic loader, so LD_PRELOAD leaking from a
// container's environment cannot load code into it (CVE-2025-23266); every
// file, tests included, is constrained to !cgo, so a cgo build fails
// ("build constraints exclude all Go files"). As NVIDIA's does, an unknown
// subcommand or flag warns and exits 0, so that a newer generator's spec
// still runs. --ldconfig-path is ignored: no ldconfig is run.
// NVIDIA_CTK_DEBUG=true is --debug. Errors go to stderr and exit 1.
package main
