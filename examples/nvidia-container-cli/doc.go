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
// written in Go, so --ldconfig and --no-pivot are accepted and unused).
// Files created in the container are owned by the container's root (the
// owner of /proc/PID; in a user namespace, its mapped root) in both,
// whatever --user says. A configure run from a rootless runtime's hook (in
// a user namespace) leaves the device cgroup to the runtime, as
// --no-cgroups would. configure undoes everything it did when a step
// fails.
//
// Build it without cgo, as the README does (CGO_ENABLED=0: a smaller
// binary, no libc, faster start), and install nvc-nvml (examples/nvc-nvml,
// a cgo build) beside it: NVML, when needed, then runs in that helper
// process, as libnvidia-container runs it in its nvc:[driver] process. The
// helper is the file nvc-nvml next to this executable, else on PATH;
// NVC_NVML_HELPER names another. --user is the helper's identity, as in
// libnvidia-container: UID[:GID] (numbers or names; a missing GID is the
// user's group), the caller's effective ids when given without a value,
// and by default the kernel's overflow ids (65534:65534, nobody) when run
// as root, the caller otherwise; supplementary groups are dropped, and
// the helper runs with no capabilities and PR_SET_NO_NEW_PRIVS. It is
// started through a descriptor and handed the library by descriptor (found
// inside --root with this process's rights), so the helper's user needs
// no access to the binary's or the driver root's directories. Unlike
// libnvidia-container the helper does not chroot into --root. Without a
// helper, a build without cgo discovers through procfs and /dev only:
// brand, architecture, compute capability and the CUDA version are
// unknown and MIG devices have no UUID. A cgo build loads NVML in process
// and does not use --user (Go's setuid would change every thread of this
// process, configure's included).
//
// configure does not start NVML: it discovers through procfs and /dev, and
// starts the driver root's libnvidia-ml.so.1 (through the helper, or in
// process in a cgo build) only for a --require term on a fact procfs lacks
// (brand, arch, a CUDA version the driver's table cannot decide) or a MIG
// device named by UUID. info, list and configure --dry-run start NVML
// first when it is there.
package main
