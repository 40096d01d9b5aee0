// Command nvidia-ctk is the CDI part of NVIDIA's nvidia-ctk rebuilt on this
// module: it writes a Container Device Interface spec for the host's GPUs,
// from the same plan nvidia-container-cli configures containers with, and
// lists the CDI devices a runtime would see. runtime configure registers
// nvidia-container-runtime in Docker's daemon.json, containerd's
// config.toml (schema version 1, 2 or 3, as the file has it; a new file
// is version 2) or a CRI-O drop-in (package nvcontainer/toolkit's
// ConfigureDocker, ConfigureContainerd and ConfigureCRIO: every key the
// file had is kept, TOML comments are not; restart the engine afterwards).
//
//	nvidia-ctk runtime configure [--runtime=docker|containerd|crio] [--config FILE] [--set-as-default] [--cdi.enabled]
//	                             [--nvidia-runtime-name NAME] [--nvidia-runtime-path PROGRAM] [--dry-run]
//	nvidia-ctk cdi generate [--output FILE] [--format json|yaml] [--vendor V] [--class C]
//	                        [--device-name-strategy index|uuid|type-index]... [--no-all-device]
//	                        [--driver-root DIR] [--dev-root DIR] [--proc-root DIR] [--sys-root DIR]
//	                        [--hook-path PATH] [--simulate MACHINE [--simulate-mig INDEX=PROFILE,...] [--simulate-keep]]
//	                        [--mode auto|nvml|management|csv|wsl] [--device-id ID]... [--disable-hook NAME|all]...
//	                        [--enable-hook NAME]... [--library-search-path DIR]... [--ldconfig-path PATH]
//	                        [--csv.file FILE]... [--csv.ignore-pattern PATTERN]... [--csv.compat-container-root DIR]
//	nvidia-ctk cdi list [--spec-dir DIR]...
//	nvidia-ctk cdi transform root --from DIR --to DIR [--relative-to host|container] [--input FILE] [--output FILE]
//	nvidia-ctk config [--config-file FILE] [--set KEY[=VALUE]]... [--set-list-separator SEP (default ":")] [--in-place | --output FILE]
//	nvidia-ctk config default|create-default|generate-default [--output FILE]
//	nvidia-ctk system create-device-nodes [--driver-root|--root DIR] [--dev-root DIR] [--proc-root DIR] [--sys-root DIR] [--load-kernel-modules]
//	nvidia-ctk system create-dev-char-symlinks [--dev-char-path DIR] [--create-all] [--driver-root DIR] [--dev-root DIR]
//	                                           [--create-device-nodes] [--load-kernel-modules]
//
// cdi generate --mode management discovers through procfs alone and writes
// the "all" device only (for management containers); nvml discovers
// through NVML alone; wsl writes a WSL2 host's spec (one "all" device with
// /dev/dxg; libdxcore.so, the driver store files, their links and loader
// cache dirs), which auto also writes where /dev/dxg exists (a host
// without it is refused). --mode csv (and auto on a Tegra
// host without a procfs driver, --simulate=jetson-orin) writes the
// Jetson's iGPU, device 0 and all, from the CSV mount specs (package
// tegra, nvcontainer.NewCSVPlan): --csv.file names the files (default:
// devices.csv, drivers.csv and l4t.csv of the driver root's
// /etc/nvidia-container-runtime/host-files-for-container.d; a file that
// does not exist is skipped, a bad line is an error naming file and
// line), --csv.ignore-pattern leaves out the sym entries a glob matches,
// --csv.compat-container-root is accepted and unused. --device-id limits the spec
// to those devices (indices, UUIDs, MIG GPU:MIG pairs). --disable-hook
// (--disable-hooks) drops the nvidia-cdi-hook commands named,
// --enable-hook (--enable-hooks) keeps one --disable-hook=all would drop
// (--enable-hook=all is refused, as by the toolkit); update-application-profile
// is the last common hook, as the toolkit writes it, except in management
// mode. --library-search-path names dirs inside the driver root searched,
// in order, for a driver library the loader cache (else the standard
// dirs) does not give. --ldconfig-path is accepted and not used: the
// update-ldcache hook writes the container's cache itself. config edits the toolkit's config.toml (package
// nvcontainer/toolkit's SetConfig: keys typed as the toolkit's, unknown
// keys refused, every other key kept, comments not). system
// create-device-nodes makes the missing nodes as nvidia-modprobe does
// (devices.CreateNodes); create-dev-char-symlinks makes the
// /dev/char/MAJOR:MINOR links of the NVIDIA nodes present (--create-all:
// of every node the driver has), the fix for NVML's "Unknown Error" in
// running containers after a systemd daemon-reload.
//
// The spec's kind is VENDOR/CLASS (nvidia.com/gpu). Each GPU is named by
// every --device-name-strategy ("0", "GPU-…", "gpu0"), each MIG device too
// ("1:0", "MIG-…", "mig1:0"); a GPU in MIG mode is listed too, with its
// /dev/nvidiaN only, as NVIDIA_VISIBLE_DEVICES=1 plans it; "all" holds them
// all. The warnings of the plan the spec is written from (driver files the
// host lacks) go to stderr; MIG devices on a host whose /proc/devices lists
// no nvidia-caps major are an error, not devices without access nodes. Driver files are bind mounts at their paths
// under the driver root, device nodes carry hostPath, type, major and minor,
// and the loader cache update and symlinks are createContainer hooks running
// --hook-path (examples/nvidia-cdi-hook, a static binary) with an explicit
// environment.
//
// --simulate generates a host (package nvcontainer/nvctest: fake NVML
// and driver tree) into a new
// temp dir and writes the spec for it; the dir is removed at exit, on
// success and on failure, unless --simulate-keep keeps it for the spec,
// whose host paths point into it. As in NVIDIA's tool, --dev-root is the root /dev is under
// and defaults to the driver root; --proc-root is where procfs is,
// --sys-root where sysfs is (the GPUs' /dev/dri nodes, the PCI devices
// nvidia-modprobe's rules look for before loading modules).
//
// # What it reads and changes
//
// runtime configure reads and replaces (atomically, keeping its mode) the
// config file, by default /etc/docker/daemon.json,
// /etc/containerd/config.toml or CRI-O's drop-in
// /etc/crio/crio.conf.d/99-nvidia.toml (crio.conf is left alone);
// --dry-run prints it instead.
//
// generate reads the host's driver files, procfs and /dev (and NVML only
// for MIG device UUIDs) and writes the spec to stdout or, atomically, to --output;
// with --simulate it also writes the generated host into a new temp dir
// (real device nodes when run as root), removed again unless
// --simulate-keep. list reads the spec dirs. Neither
// needs privileges beyond reading the host's driver and writing the
// output; no particular kernel.
//
// # When not to use it
//
// Only the subcommands of the usage exist (NVIDIA's hook subcommand does
// not; system create-dev-char-symlinks has no --watch), and containerd's drop-in (--drop-in-config) does not: the runtime
// goes into config.toml itself. The spec describes the
// host at the time it was written: regenerate it when the driver or the
// GPUs change.
//
// # Static builds
//
// generate does not start NVML for a spec it can write from procfs: a
// cgo build loads libnvidia-ml.so.1 (through go-nvml) only when the host
// has MIG devices and the spec names devices by UUID, which procfs lacks.
// A static build (CGO_ENABLED=0) discovers through procfs and /dev
// only, so brand, architecture, compute capability and the CUDA version
// are unknown and MIG devices have no UUID.
package main
