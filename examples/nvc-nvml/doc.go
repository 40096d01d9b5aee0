//go:build cgo

// Command nvc-nvml is the NVML helper of a program built without cgo
// (nvidia-container-cli's default build): such a program cannot load
// libnvidia-ml.so.1, so when it needs a fact only NVML has (info, list,
// configure --dry-run, a --require on brand or arch, a MIG device named by
// UUID) it runs this program, which loads the library, asks it everything
// discovery and the driver versions ask (devices.TakeNVMLSnapshot), writes
// the answers as JSON on stdout and exits. devices.NewNVMLHelper is the
// other side. Like libnvidia-container's NVML helper process
// (nvc:[driver]), it keeps NVML's code away from the caller's privileges:
//
//   - the caller starts it as an unprivileged user (devices.NewNVMLHelper
//     sets the identity, --user of nvidia-container-cli, default
//     65534:65534, in the forked child before the exec: setgroups, setgid,
//     setuid, on the one thread the child has);
//   - before the Go runtime starts a thread (a C constructor), it sets
//     PR_SET_NO_NEW_PRIVS (nothing NVML runs, e.g. the set-uid
//     nvidia-modprobe, gains privileges), clears its ambient capabilities,
//     drops its bounding set where it may, and clears its permitted,
//     effective and inheritable capabilities, so every thread, the one
//     NVML's calls run on included, has none, whoever started it (root
//     included), and makes itself not dumpable (as libnvidia-container's
//     helper is after its setuid), so that no other process of its user
//     may ptrace it; and it closes every descriptor above 3 (Go's exec
//     closes only a caller's close-on-exec ones: any other would reach
//     NVML's code);
//   - it checks that this holds (CapEff, CapPrm and NoNewPrivs of
//     /proc/thread-self/status) before it loads the library, and refuses
//     to run otherwise.
//
// The library is the caller's to find: with --fd=3 it is the file open at
// descriptor 3 (the only one kept; the caller resolved it inside the driver root with its own
// rights, so the helper's user needs no access to that root), loaded
// through that descriptor; with --root and --library as for Discover
// (devices.Options.NVMLLibrary, resolved inside the root); with neither,
// libnvidia-ml.so.1 found by the dynamic loader.
//
//	nvc-nvml [--fd=3 | --root=DIR [--library=PATH]]
//
// Descriptor 1 is pointed at stderr before the library is loaded, and the
// snapshot written to the original stdout, so that what the library prints
// cannot spoil it. Unlike libnvidia-container it does not chroot into the driver root (the
// library comes by descriptor instead) and answers once instead of over
// an RPC channel. It needs cgo (every file is cgo-only).
package main
