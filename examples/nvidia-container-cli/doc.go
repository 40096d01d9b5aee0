// Command nvidia-container-cli is NVIDIA's nvidia-container-cli rebuilt on
// this module: the same global options, commands (info, list, configure),
// flags, argp's --help, --usage and usage errors, output layout, error
// prefixes, debug log (--debug or NVC_DEBUG_FILE) and exit status (1 on
// any error), so that NVIDIA's nvidia-container-runtime-hook can run it in
// place of the original. The command line and the outputs are package
// nvcontainer/nvcli's; this program opens the host and prints.
//
//	nvidia-container-cli [OPTION...] COMMAND [ARG...]
//	nvidia-container-cli --simulate=dgxa100 info
//	nvidia-container-cli configure --pid=PID --device=all --compute --utility ROOTFS
//
// Extras: --simulate runs any command against a generated host (package
// nvcontainer/nvctest: a fake NVML of a DGX and a driver tree in a temp
// dir, removed at exit unless --simulate-keep is given or configure
// applied it; its files are then mounted in the container and the dir is
// named on stderr); --proc-root and --dev-root point discovery at another
// procfs and /dev; configure --dry-run prints the plan as JSON.
//
// On a Tegra host without a procfs driver (--simulate=jetson-orin, or
// --root naming a Jetson's file system) every command works in CSV mode,
// from the mount specs in /etc/nvidia-container-runtime/
// host-files-for-container.d (package tegra): info prints the L4T
// release, the spec files and counts, list the paths the base files give,
// and configure plans with nvcontainer.NewCSVPlan (device 0 or all;
// --require=csv-mounts=all reads every file, other requirements are not
// checked).
//
// Differences: nothing is run inside the container (the loader cache is
// written in Go, so --ldconfig and --no-pivot are accepted and unused);
// --user is accepted and unused: libnvidia-container gives it only to its
// NVML helper process (chrooted, without capabilities, nobody by default),
// and nvc has none — NVML is loaded in-process, and only for facts procfs
// lacks; dropping the whole process to --user (Go's setuid changes every
// thread) would take away what configure needs next. Files created in
// the container are owned by the container's root (the owner of
// /proc/PID; in a user namespace, its mapped root) in both, whatever
// --user says. A configure run from a rootless runtime's hook (in a user
// namespace) leaves the device cgroup to the runtime, as --no-cgroups
// would. configure undoes everything it did when a step fails.
//
// configure does not start NVML: it discovers through procfs and /dev, and
// a cgo build starts the driver root's libnvidia-ml.so.1 only for a
// --require term on a fact procfs lacks (brand, arch, a CUDA version the
// driver's table cannot decide) or a MIG device named by UUID. info, list
// and configure --dry-run load NVML first when it is there. A static build
// (CGO_ENABLED=0) discovers through procfs and /dev only: brand,
// architecture, compute capability and the CUDA version are unknown and
// MIG devices have no UUID.
package main
