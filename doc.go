// Package nvc makes a host's NVIDIA GPUs and driver usable inside a
// container. It is libnvidia-container (nvidia-container-cli) rebuilt as a Go
// library for container runtimes, OCI hooks, CDI generators and device
// plugins. This package holds no code; it is the map of the module.
//
// # The one flow
//
// Host facts and a request make a plan; the plan is applied to a container,
// written out as a CDI spec, or printed:
//
//	drv, _ := driver.Open(nil)                  // driver files by capability, via ld.so.cache
//	gpus, _ := devices.Discover(nil)            // GPUs, MIG devices, control nodes (NVML or procfs)
//	req, _ := nvcontainer.RequestFromEnv(env)   // NVIDIA_VISIBLE_DEVICES, NVIDIA_DRIVER_CAPABILITIES, ...
//	plan, _ := nvcontainer.NewPlan(host, req, ctr)
//	err := plan.Apply(ctx, ctr)                 // or plan.CDISpec(kind), or json.Marshal(plan)
//
// Everything before Apply is pure and fast: no mounts, no namespaces, no root.
// The same plan feeds the CLI's list, a dry run, the CDI spec and the real
// configuration, so they cannot disagree.
//
// # Packages
//
//   - [github.com/go-nvc/nvc/ldcache] reads, builds and writes glibc's
//     /etc/ld.so.cache in all three layouts, and stands in for ldconfig: it
//     scans a root's ld.so.conf directories and writes the cache without
//     executing any binary.
//   - capabilities: the driver capability classes (compute, compat32,
//     graphics, utility, video, display, ngx) and sets of them.
//   - driver: what the host driver provides for a capability set — libraries
//     (64- and 32-bit), binaries, IPC sockets, firmware, config files — found
//     through the host's ld.so.cache under a driver root.
//   - devices: GPUs, MIG devices, IMEX channels and control nodes, through
//     NVML (go-nvml) or, without it, through /proc/driver/nvidia and /dev;
//     device selection with NVIDIA_VISIBLE_DEVICES syntax; host node creation.
//   - nvcontainer: requests (environment, OCI spec, CLI flags), requirement
//     checks (NVIDIA_REQUIRE_*), the plan, applying it inside a container's
//     mount namespace all or nothing, and CDI output.
//
// Packages other than ldcache are being built in this order; until they land,
// the list above is the plan they follow.
//
// # Programs
//
// The examples directory holds thin programs over the public API: ldconfig
// (a glibc-compatible ldconfig over package ldcache), and, as they land,
// nvidia-container-cli, nvidia-container-runtime-hook,
// nvidia-container-runtime and nvidia-ctk (CDI generation).
package nvc
