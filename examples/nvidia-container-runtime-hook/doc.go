// Command nvidia-container-runtime-hook is an OCI runtime hook that gives a
// container the GPUs its environment asks for (NVIDIA_VISIBLE_DEVICES,
// NVIDIA_DRIVER_CAPABILITIES, NVIDIA_REQUIRE_*, …), as NVIDIA's hook of the
// same name does — but in-process: where NVIDIA's hook executes
// nvidia-container-cli, this one opens the driver, discovers the devices,
// plans and applies the configuration itself, undoing it if a step fails.
//
//	nvidia-container-runtime-hook [-config FILE] [-debug] [-dry-run] prestart
//
// Register it as a prestart (or createRuntime) hook; poststart and poststop
// do nothing. It reads the OCI state from stdin and the bundle's
// config.json, and its config from -config, $NVIDIA_CTK_CONFIG_FILE_PATH,
// $XDG_CONFIG_HOME/nvidia-container-runtime/config.toml or
// /etc/nvidia-container-runtime/config.toml, with the toolkit's keys plus
// an [nvc] table (proc-root, dev-root, sys-root, backend) for a driver
// whose procfs, /dev and sysfs are elsewhere. A container that asks for no GPU is left alone.
// -dry-run prints the nvidia-container-cli command NVIDIA's hook would run
// and changes nothing.
//
// Mode detection: with [nvidia-container-runtime] mode cdi or jit-cdi the
// runtime applies CDI edits and the hook does nothing (unless
// [nvidia-container-runtime-hook] skip-mode-detection), where NVIDIA's
// hook refuses. In legacy and auto mode, CDI names of NVIDIA's kinds in
// NVIDIA_VISIBLE_DEVICES (nvidia.com/gpu=0, runtime.nvidia.com/gpu=all)
// are configured as the IDs they name, where NVIDIA's hook refuses a
// request of CDI names only in auto mode; a name of another kind is an
// error (toolkit.HookSkips, toolkit.HookDevices).
//
// Flags are Go's (-config and --config both work), as in NVIDIA's hook.
// The hook discovers through procfs unless [nvc] backend says otherwise,
// and starts the driver root's NVML only for a requirement on a fact
// procfs lacks (brand, architecture) or a MIG device named by UUID
// (nvcontainer.PrepareHostFor). It ships built with CGO_ENABLED=0 (static:
// a smaller, faster-starting process, and no dynamic loader for an
// LD_PRELOAD to reach), with the NVML helper nvc-nvml (examples/nvc-nvml,
// a cgo build) beside it: NVML then runs in that helper, found next to
// the hook, else on PATH, or named by $NVC_NVML_HELPER
// (devices.FindNVMLHelper, as nvidia-container-cli finds it), as
// [nvidia-container-cli] user (what NVIDIA's hook passes as --user;
// default 65534:65534), without capabilities, with PR_SET_NO_NEW_PRIVS
// (toolkit.HelperNVML). Without a helper those facts are unknown to
// NVIDIA_REQUIRE_* checks. A cgo build loads NVML in-process and ignores
// user. Either way the hook, and the helper it starts, must be given an
// explicit environment in the runtime spec, never the container's, or a
// container's LD_PRELOAD or NVC_NVML_HELPER would reach them;
// nvidia-container-runtime registers it that way.
//
//	CGO_ENABLED=0 go build -o /usr/local/bin/nvidia-container-runtime-hook ./examples/nvidia-container-runtime-hook
//	go build -o /usr/local/bin/nvc-nvml ./examples/nvc-nvml
//
// # What it reads and changes
//
// It reads the OCI state, the bundle's config.json, its config file and
// the host's driver files, procfs and /dev (NVML when it loads). It
// changes the container: mounts in its mount namespace, device nodes,
// device cgroup rules and its ld.so.cache, all undone if a step fails;
// with load-kmods it may also load the NVIDIA kernel modules and create
// missing device nodes on the host. It needs root (CAP_SYS_ADMIN to join
// the namespace and mount) and Linux 5.12 for the new mount API (older
// kernels use bind-by-path and remount).
//
// # When not to use it
//
// Only in prestart or createRuntime, where the state has the container's
// PID; never with the container's environment. The state's pid is not
// trusted: a pid that is 0, beyond pid_max, gone, a zombie, or whose mount
// namespace is the hook's own (a host process) or init's is refused
// ("container pid N: ...: invalid container pid") before anything is
// changed. So is a hook registered at createContainer, which runs in the
// container's mount namespace and gets pid 0 from crun and pid 1 from runc:
// it cannot tell that namespace from the host's, and never works in its
// own. A runtime that speaks CDI should use a spec
// from examples/nvidia-ctk instead.
package main
