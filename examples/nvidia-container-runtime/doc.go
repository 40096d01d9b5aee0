// Command nvidia-container-runtime wraps a low-level OCI runtime (runc by
// default, crun by config) the way NVIDIA's runtime does: for `create` and
// `run` it edits the bundle's config.json in the configured
// [nvidia-container-runtime] mode (toolkit.ResolveMode), then executes the
// runtime with the same arguments. Every other command goes straight
// through. The modes:
//
//   - legacy: a container that asks for GPUs gets
//     nvidia-container-runtime-hook as a prestart hook;
//
//   - cdi: the CDI devices the container names (cdi.k8s.io/ annotations,
//     or NVIDIA_VISIBLE_DEVICES, whose plain IDs get modes.cdi.default-kind)
//     are injected from the specs in modes.cdi.spec-dirs, and
//     NVIDIA_VISIBLE_DEVICES becomes void;
//
//   - jit-cdi: the spec of the requested devices (kind
//     runtime.nvidia.com/gpu) is made in process from the host, as
//     nvidia-ctk cdi generate makes one, and injected; its hooks are
//     nvidia-cdi-hook from PATH, else /usr/bin/nvidia-cdi-hook;
//
//   - csv (Jetson): the spec of the iGPU is made from the CSV mount specs
//     in [nvidia-container-runtime.modes.csv] mount-spec-path (the base
//     files, or all with NVIDIA_REQUIRE_JETPACK=csv-mounts=all) on the
//     host below [nvidia-container-cli] root, and injected;
//
//   - auto (the default): cdi when the container names only CDI devices,
//     csv on a Tegra host, else legacy (NVIDIA's 1.20 picks jit-cdi on
//     NVML hosts);
//
//     nvidia-container-runtime [RUNTIME OPTIONS] COMMAND [ARG...]
//
// The config is $NVIDIA_CTK_CONFIG_FILE_PATH, else
// /etc/nvidia-container-runtime/config.toml: [nvidia-container-runtime]
// runtimes (the candidates, first found in PATH wins; default runc, crun)
// and debug (a log file), [nvidia-container-runtime-hook] path (default:
// nvidia-container-runtime-hook in PATH). The hook is given an explicit
// environment (PATH only) and the config file as -config, so nothing of the
// container's environment (LD_PRELOAD, …) reaches it. When editing the
// bundle fails (a jit-cdi requirement the host does not meet, an unknown
// CDI device), the error also goes to the runtime's --log file in its
// --log-format, where containerd's shim reads the runtime's error back, as
// NVIDIA's runtime writes it there.
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
// A runtime that speaks CDI (podman,
// containerd, CRI-O) is better served by a spec from examples/nvidia-ctk.
//
// It ships built with CGO_ENABLED=0 (static), with nvc-nvml
// (examples/nvc-nvml) beside it: jit-cdi discovers GPUs through procfs
// and asks NVML, in that helper (devices.FindNVMLHelper; run as
// [nvidia-container-cli] user, default 65534:65534, by
// toolkit.HelperNVML), only for a requirement on a fact procfs lacks or a
// MIG device named by UUID; without the helper those facts are unknown.
// A cgo build loads NVML in-process instead.
package main
