// Package nvctest simulates NVIDIA GPU hosts for tests, in the manner of
// net/http/httptest: a test that needs a GPU host generates one into a
// temporary directory and points the library at it, with no GPU, no
// driver, no root and no cgo.
//
// A generated host is a directory tree and a fake NVML that agree with
// each other:
//
//   - under Host.Roots.Driver, the driver's files as a runfile install
//     leaves them (real ELF shared objects with their SONAMEs and links,
//     binaries, firmware, config files, sockets), plus decoys of another
//     driver version that a correct selection rejects, and an ld.so.cache
//     listing them (Host.Roots.LDCache);
//   - under Host.Roots.Proc, /proc/driver/nvidia (version, params, one
//     gpus/<bus id>/information per GPU, the MIG capability files) and
//     /proc/devices;
//   - under Host.Roots.Dev, /dev/nvidia0-7, nvidiactl, nvidia-uvm,
//     nvidia-modeset, the nvidia-caps nodes of MIG and the IMEX channels
//     (plain files, or real character devices with Options.RealNodes);
//   - Host.NVML, a devices.NVMLInterface answering for the same GPUs.
//
// The machines are the DGX systems of go-nvml's mocks: DGXA100, DGXH100,
// DGXH200 and DGXB200, eight GPUs each, on the PCI buses of the real board
// (GPU 0 of a DGX A100 is 00000000:07:00.0). GPUs are in MIG mode with the
// MIG devices Options.MIG lists. UUIDs are name-based: the same for a
// machine, GPU index and MIG instance on every run (Machine.GPUUUID,
// Machine.MIGUUID), so a test may write them down.
//
// NewHost is for tests (the tree goes in t.TempDir()); Generate writes into
// a directory of the caller's and GenerateTemp into a new temporary one, as
// a program's --simulate flag does. Host.Open opens the host as a runtime
// opens a real one; Host.DriverOptions gives its roots to the library's
// other entry points.
//
// The hosts describe no real machine: a program that runs against one must
// say so. They are x86-64 hosts only.
package nvctest
