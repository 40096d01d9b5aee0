// Package fakehost generates a simulated NVIDIA host into a directory: the
// driver's files, an ld.so.cache, and procfs and /dev trees, all
// describing the same GPUs as a fake NVML (package fakenvml, pure Go: the
// simulator builds without cgo).
// Every test in the module that needs a GPU host uses it, and package
// nvcontainer/nvctest offers it to users' tests and to the examples'
// --simulate flags, so it does not depend on package testing.
//
// # What it generates
//
// Under Host.Root, for the Debian 12 layout (the default) or Fedora 40
// ([Options].Layout):
//
//   - release files (etc/debian_version or etc/fedora-release,
//     etc/os-release), merged-/usr links (bin, sbin, lib, lib64), and
//     etc/ld.so.conf with the distribution's ld.so.conf.d files;
//   - the driver's libraries, real ELF shared objects with the SONAMEs,
//     DT_NEEDED entries, ABI notes and SONAME/development links of a
//     runfile install: every name on libnvidia-container's lists, 64-bit in
//     usr/lib/x86_64-linux-gnu (usr/lib64) and the 32-bit subset in
//     usr/lib/i386-linux-gnu (usr/lib); libvdpau_nvidia in a vdpau/
//     subdir ld.so.conf does not list;
//   - decoys a correct selection rejects: GL/EGL core, GLSI and TLS
//     libraries of another driver version beside the real ones (and a
//     32-bit GL core), libcuda and libnvidia-ml of that version behind the
//     SONAME links of a legacy dir (opt/nvidia-legacy/lib64, last in the
//     cache), a libnvidia-tls with the classic TLS ABI note, and stale
//     cache entries whose files were since replaced by a text file and a
//     directory;
//   - a Mesa dir (<libdir>/mesa, listed in ld.so.conf) holding a Mesa
//     libGL.so.1 that does not need the driver's GL core;
//   - config files: the GLVND EGL vendor, EGL external platform (GBM,
//     Wayland), Vulkan ICD and implicit layer JSON files, the OpenCL ICD,
//     nvoptix.bin and the X11 output class (usr/share and etc);
//   - X modules: nvidia_drv.so and libglxserver_nvidia.so.<version> under
//     usr/lib/xorg/modules (usr/lib64/xorg/modules);
//   - binaries in usr/bin (nvidia-smi, nvidia-debugdump,
//     nvidia-persistenced, nv-fabricmanager, nvidia-cuda-mps-control and
//     -server: x86-64 executables that exit 0), GSP firmware of the
//     driver's and the decoy version under lib/firmware/nvidia, the
//     persistenced and fabricmanager sockets under run (var/run links to
//     it) and tmp/nvidia-mps;
//   - etc/ld.so.cache, built with package ldcache as glibc's ldconfig -X
//     would for x86-64 (glibc's ldconfig reads it the same way: the tests
//     check);
//   - the procfs tree (Host.ProcRoot = Root/proc): driver/nvidia/version,
//     params and registry, gpus/<bus id>/information (registry, power) per
//     GPU, driver/nvidia-caps/mig-minors, nvlink-minors and sys-minors,
//     the MIG config and monitor and fabric-imex-mgmt capability files and,
//     for each MIG device, its GPU and compute instance access files, and
//     /proc/devices and /proc/modules;
//   - the dev tree (Host.DevRoot = Root/dev): nvidia<minor> per GPU,
//     nvidiactl, nvidia-modeset, nvidia-uvm and nvidia-uvm-tools, the
//     nvidia-caps nodes of the MIG config and monitor capabilities and of
//     every MIG device's instances, the IMEX channel nodes, and /dev/dri:
//     a card and a render node per GPU with their by-path links;
//   - the sysfs tree (Host.SysRoot = Root/sys): bus/pci/devices/<bus id>
//     (vendor, device, class, drm/cardN and renderDN) per GPU, a decoy
//     VGA controller of another vendor (with card0) and a decoy NVIDIA
//     bridge that is no display controller, and module/<name>/initstate of
//     the loaded NVIDIA modules.
//
// # Options
//
// [Options] choose the driver version, the machine (a fakenvml DGX, as
// go-nvml's mocks describe it: dgxa100, dgxh100, dgxh200, dgxb200) or a
// ready devices.NVMLInterface, the
// layout, which GPUs are in MIG mode with which profiles (MIG), how many
// IMEX channel nodes to make, and whether device nodes are real
// (RealNodes) or plain files standing in for them.
//
// # What it needs
//
// It writes only below the directory it is given, which must exist and be
// empty. Real device nodes need CAP_MKNOD (root); everything else needs no
// privilege and no particular kernel.
//
// # When not to use it
//
// It describes no real machine: never point a production tool at it
// without saying so (the examples print "SIMULATED" when they do). It is
// x86-64 only, and it is not a second implementation of the code under
// test: tests compare against its facts and against real peers (glibc's
// ldconfig, the dynamic loader), never against code shared with the
// library.
package fakehost
