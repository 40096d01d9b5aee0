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
//	drv, _ := driver.Open(nil)                       // versions, driver files by capability (via ld.so.cache)
//	gpus, _ := devices.Discover(ctx, nil)            // GPUs, MIG devices, control nodes (NVML or procfs)
//	host := &nvcontainer.Host{Driver: drv, Devices: gpus} // or nvcontainer.OpenHost(ctx, nil, "")
//	req, _ := request.FromEnv(env)        // NVIDIA_VISIBLE_DEVICES, NVIDIA_DRIVER_CAPABILITIES, ...
//	plan, _ := nvcontainer.NewPlan(host, req, ctr, nil)
//	err := plan.Apply(ctx, ctr, nil)                 // or cdispec.FromPlan(plan, nil), or plan.JSON()
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
//   - [github.com/go-nvc/nvc/capabilities]: the driver capability classes
//     (compute, compat32, graphics, utility, video, display, ngx) and sets of
//     them.
//   - [github.com/go-nvc/nvc/driver]: the host's roots (driver.Roots, one
//     type and one defaulting rule for every package), the one source of
//     the driver and CUDA driver versions, and what the host driver
//     provides for a capability set — libraries (64- and 32-bit),
//     binaries, IPC sockets, firmware, config files — found through the
//     host's ld.so.cache under a driver root.
//   - [github.com/go-nvc/nvc/devices]: GPUs, MIG devices, IMEX channels and
//     control nodes, through NVML (go-nvml, in cgo builds) or, without it, through
//     /proc/driver/nvidia and /dev; device selection with
//     NVIDIA_VISIBLE_DEVICES syntax; host node creation.
//   - [github.com/go-nvc/nvc/nvcontainer]: requests (environment, OCI spec and
//     hook state), requirement checks
//     (NVIDIA_REQUIRE_*), the plan, applying it inside a container's mount
//     namespace all or nothing.
//   - [github.com/go-nvc/nvc/nvcontainer/toolkit]: the NVIDIA Container
//     Toolkit's glue: config.toml, the runtime hook's request and the
//     nvidia-container-cli command line it would execute, runc's argv,
//     adding the hook to a bundle's config.json. It applies nothing itself.
//   - [github.com/go-nvc/nvc/nvcontainer/cdispec]: a plan, or a whole host,
//     written as a CDI spec (device naming, the createContainer hooks),
//     validated and encoded.
//   - [github.com/go-nvc/nvc/nvcontainer/nvcli]: the nvidia-container-cli
//     contract — configure's flags to a request and a container, the info
//     and list output, the error prefixes — for tools that stand in for it.
//
// Dependencies point one way: {cdispec, toolkit, nvcli} → nvcontainer → {driver,
// devices} → {ldcache, capabilities} → internal. Only Apply, device node
// creation and the ldcache writers act on the system; everything else is
// pure.
//
// # Programs
//
// The examples directory holds thin programs over the public API:
// nvidia-container-cli (a drop-in for NVIDIA's, with --simulate to try it
// without a GPU), nvidia-container-runtime-hook (an OCI hook),
// nvidia-container-runtime (a runc/crun wrapper), nvidia-ctk (CDI
// generation), nvidia-cdi-hook (the static createContainer hook CDI specs
// call, over nvcontainer/cdihook) and ldconfig (a glibc-compatible
// ldconfig over package ldcache).
package nvc
