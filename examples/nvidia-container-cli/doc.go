// Command nvidia-container-cli is NVIDIA's nvidia-container-cli rebuilt on
// this module: the same global options, commands (info, list, configure),
// flags, output layout, error prefixes and exit status (1 on any error), so
// that NVIDIA's nvidia-container-runtime-hook can run it in place of the
// original.
//
//	nvidia-container-cli [GLOBAL OPTIONS] COMMAND [ARG...]
//	nvidia-container-cli --simulate=dgxa100 info
//	nvidia-container-cli --simulate=dgxa100 list
//	nvidia-container-cli configure --pid=PID --device=all --compute --utility ROOTFS
//
// Global options come before the command. Extras: --simulate runs any
// command against a generated host (package nvcontainer/nvctest: a fake
// NVML of a DGX, pure Go, and a driver tree in a temp dir) so the tool can be tried without a GPU; the temp dir
// is removed at exit, also when a command fails, unless --simulate-keep is
// given or configure applied it (its files are then mounted in the
// container, and the dir is named on stderr to be removed later); --proc-root
// and --dev-root point discovery at another procfs and /dev; configure
// --dry-run prints the plan as JSON instead of applying it.
//
// Differences: nothing is run inside the container (the loader cache is
// written in Go, so --ldconfig and --no-pivot are accepted and unused);
// --user is accepted and unused (NVML is loaded in-process, not in a
// helper); configure undoes everything it did when a step fails.
//
// # Static builds
//
// configure does not start NVML: it discovers through procfs and /dev
// (nvcontainer.PrepareHostFor), and a cgo build loads and starts the
// driver root's libnvidia-ml.so.1 only for a --require term on a fact
// procfs lacks (brand, arch, a CUDA version the driver's table cannot
// decide), or discovers again with NVML for a MIG device named by UUID;
// its result is the same as with NVML first. info, list and
// configure --dry-run load NVML (through go-nvml) first when it is
// there. A static build (CGO_ENABLED=0) discovers through procfs and /dev
// only, so brand, architecture, compute capability and the CUDA version
// are unknown and MIG devices have no UUID.
package main
