// Package cdispec writes a plan, or a whole host, as a CDI spec
// (tags.cncf.io/container-device-interface) for runtimes that apply CDI
// themselves (podman, containerd, CRI-O): [FromPlan] writes one plan of
// nvcontainer.NewPlan, [FromHost] plans every device of a host and writes
// that, as nvidia-ctk cdi generate does. [Validate] applies the CDI
// module's rules, [Marshal] encodes JSON or YAML. The package only reads
// plans, and stats the host's device nodes for their mode and group: it
// mounts nothing and touches no container.
//
// # What a spec holds
//
// The spec uses the least cdiVersion its content needs, at least 0.5.0
// ([DefaultVersion], the newest podman 4.3 loads), and kind nvidia.com/gpu
// ([DefaultKind]):
//
//   - one device per selected GPU and MIG device and naming strategy
//     ([NameStrategy]: index, uuid, type-index, as nvidia-ctk's
//     --device-name-strategy), plus "all", so that asking the spec for the
//     IDs the plan was made for gives what the plan gives: a GPU in MIG
//     mode is listed too, with its /dev/nvidiaN only (what the plan gives a
//     GPU selected whole); a MIG device gets its parent's node and the
//     nvidia-caps access nodes of its GPU and compute instance; a GPU
//     planned with graphics or display also gets its /dev/dri card and
//     render nodes and a create-symlinks hook for its
//     /dev/dri/by-path/pci-<bus id>-card and -render links, as the NVIDIA
//     Container Toolkit's per-device edits have them; device
//     nodes carry hostPath, type, major and minor, "rwm" access, and the
//     host node's fileMode and gid (no uid: the runtime gives the node to
//     the container's user); the group of a node that is not world
//     readable and writable goes into additionalGids (cdiVersion 0.7.0),
//     so that a non-root user can open a 0660 root:video node, unless
//     Options.NoAdditionalGIDs;
//   - spec-wide edits: the shared device nodes (nvidiactl, nvidia-uvm …,
//     IMEX channels), the driver files as bind mounts with the plan's
//     flags, NVIDIA_VISIBLE_DEVICES=void (so a legacy hook does not inject
//     a second time), and createContainer hooks, each with an explicit
//     environment ([DefaultHookEnv]: a hook without one inherits the
//     container's, LD_PRELOAD included, CVE-2025-23266), in the NVIDIA
//     Container Toolkit's order: create-symlinks --link TARGET::LINK for
//     the plan's library symlinks; enable-cuda-compat --host-driver-version
//     VERSION with compute, unless the compat mode is disabled or the plan
//     already used an image's compat libraries (the hook decides on the
//     container's /usr/local/cuda/compat and adds an ld.so.conf.d entry);
//     update-ldcache --folder DIR for the loader cache dirs; and
//     disable-device-node-modification where the plan masks
//     /proc/driver/nvidia (the hook mounts a copy of params with
//     ModifyDeviceFiles: 0 over the container's). The hook program is
//     [DefaultHookPath] (examples/nvidia-cdi-hook, over package cdihook);
//   - devices sorted by name, so the same plan gives the same spec.
//
// What a plan holds that CDI cannot express is left out: the
// /proc/driver/nvidia and application profile tmpfs (a CDI runtime mounts
// the host's procfs; the disable-device-node-modification hook masks
// params) and cgroup rules (the runtime derives them from the device
// nodes). A plan made without a rootfs (nvcontainer.Layout.HostPaths)
// mounts the libraries at their host paths, as the NVIDIA Container
// Toolkit's specs do; the update-ldcache hook then adds those dirs to the
// container's loader cache.
//
// A runtime that applies a spec's edits to an OCI spec (a CDI cache's
// InjectDevices, as podman does) gives the container exactly the plan's
// device nodes, mounts, environment, hooks and cgroup rules, for any
// selection of devices: the package's tests check this on the simulated
// DGX hosts of package nvctest, with and without MIG.
package cdispec
