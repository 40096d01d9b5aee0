// Command nvidia-container-runtime wraps a low-level OCI runtime (runc by
// default, crun by config) the way NVIDIA's runtime does in its legacy
// mode: for `create` and `run` of a container that asks for GPUs, it adds
// nvidia-container-runtime-hook as a prestart hook to the bundle's
// config.json; then it executes the runtime with the same arguments. Every
// other command goes straight through.
//
//	nvidia-container-runtime [RUNTIME OPTIONS] COMMAND [ARG...]
//
// The config is $NVIDIA_CTK_CONFIG_FILE_PATH, else
// /etc/nvidia-container-runtime/config.toml: [nvidia-container-runtime]
// runtimes (the candidates, first found in PATH wins; default runc, crun)
// and debug (a log file), [nvidia-container-runtime-hook] path (default:
// nvidia-container-runtime-hook in PATH). The hook is given an explicit
// environment (PATH only) and the config file as -config, so nothing of the
// container's environment (LD_PRELOAD, …) reaches it.
//
// # What it reads and changes
//
// It reads the config file and, for create and run, the bundle's
// config.json, which it rewrites (atomically, every unknown member kept)
// when the container asks for GPUs. Then it executes the runtime, which
// needs what it always needs (root for rootful containers).
//
// # When not to use it
//
// It implements NVIDIA's legacy mode only: no cdi, jit-cdi or csv mode
// and no CDI annotations. A runtime that speaks CDI (podman, containerd,
// CRI-O) is better served by a spec from examples/nvidia-ctk.
//
// It needs no cgo: it only edits config.json, and builds static with
// CGO_ENABLED=0.
package main
