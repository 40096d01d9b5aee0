// Package toolkit is the NVIDIA Container Toolkit's side of a GPU
// container: its config.toml, the decisions and the command line of its
// runtime hook (nvidia-container-runtime-hook), the command line of the
// low-level runtime its runc wrapper (nvidia-container-runtime) is given,
// and the hook that wrapper adds to a bundle's config.json. It decides and
// prints; it applies nothing itself: the plan and Apply are package
// nvcontainer's.
//
// # config.toml
//
// [Config] is the toolkit's /etc/nvidia-container-runtime/config.toml with
// the toolkit's keys (api/config/v1). [FindConfig] loads the file the hook
// would read, in the hook's order ([ConfigPath]: its -config flag,
// NVIDIA_CTK_CONFIG_FILE_PATH, $XDG_CONFIG_HOME, /etc); [LoadConfig] and
// [ParseConfig] read a given file. The zero Config, a nil *Config and
// [DefaultConfig] configure a container alike. [Config.RequestOptions] maps
// the file onto the settings package request reads.
//
// This module's own keys sit beside the toolkit's in an [nvc] table
// ([HostRoots]: the host's proc and dev roots and the discovery backend),
// which the toolkit ignores; [LoadHostRoots] reads it from the file
// FindConfig found.
//
// # The runtime hook
//
// [RequestFromHook] does what nvidia-container-runtime-hook prestart does
// before it executes nvidia-container-cli: it reads the OCI state from
// stdin, loads the bundle's config.json and builds the request and the
// container ([ContainerFor]: crun's state root first, else the spec's
// root.path). [CLIArgs] is the nvidia-container-cli command line the hook
// would execute for that request, in the hook's order, so a dry run shows
// exactly what the original toolchain would have done; [FormatCommand]
// prints it for a shell and [NormalizeLDConfigPath] resolves the
// configured ldconfig as the hook does.
//
// # The runtime wrapper
//
// [ParseRuntimeArgs] finds the subcommand and the bundle in a runc or crun
// command line, as runc's flag parser reads them; [AddHook] adds a hook to
// a bundle's config.json, keeping every member it does not know.
//
// # Docker
//
// [ConfigureDocker] is `nvidia-ctk runtime configure --runtime=docker`:
// Docker's daemon.json with the runtime registered (and, if asked, made
// the default and CDI turned on), every other member kept as written.
// [NvidiaDocker] is the seed's nvidia-docker rule: the docker command line
// for its arguments and NV_GPU.
//
// # Runtime modes
//
// [ResolveMode] decides, as NVIDIA's runtime does, what the wrapper does
// with a container under [nvidia-container-runtime] mode: legacy (add the
// hook), cdi (inject CDI devices from modes.cdi.spec-dirs) or jit-cdi
// (make the spec of the requested devices in process) or csv (make it
// from a Tegra host's CSV mount specs: [CSVFiles], [CSVSpec]), with auto
// read as cdi when the container names only CDI devices (annotations with
// a modes.cdi.annotation-prefixes key, or NVIDIA_VISIBLE_DEVICES items
// like nvidia.com/gpu=0), csv on a Tegra host ([IsCSVHost]) and legacy
// otherwise. Where NVIDIA's toolkit 1.20 resolves auto to jit-cdi on NVML
// hosts, this package keeps legacy, the in-process hook being its
// natural path. [ApplyMode] applies a cdi, jit-cdi or csv decision to
// the OCI spec ([InjectCDI], [JitSpec], [CSVSpec], [InjectSpec]) and
// voids the request in the environment ([VoidDeviceRequest]). The hook
// side: [HookSkips] (the hook does nothing in cdi and jit-cdi mode) and
// [HookDevices] (CDI names of NVIDIA's kinds become the IDs configure
// takes, where NVIDIA's hook refuses them in auto mode).
//
// Nothing here reads the process environment: the environment and stdin
// are parameters, files are read only where asked to, with bounded sizes,
// and the library does not log. Only jit-cdi acts on the system as the
// hook does (reading the driver, loading kernel modules unless
// load-kmods = false) and writes its spec to a private temporary dir.
package toolkit
