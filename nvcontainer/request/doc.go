// Package request reads what a container asks for: the NVIDIA_*
// environment, the OCI runtime spec and the state a runtime gives a hook,
// with the rules of NVIDIA's nvidia-container-runtime-hook. The result, a
// [Request], is what nvcontainer.NewPlan plans for.
//
// A [Request] says whether a container is a GPU container at all and, if
// so, which GPUs (all, none, or a list of indices, UUIDs, PCI bus IDs, MIG
// "gpu:mig" pairs or MIG UUIDs, kept as strings for package devices to
// resolve), which driver capability classes, which requirements, MIG
// config/monitor access, IMEX channels and CUDA forward-compatibility mode.
//
// Requests are built with the rules of NVIDIA's nvidia-container-runtime-hook
// (NVIDIA Container Toolkit 1.17–1.20):
//
//   - [New] from an environment list, the spec's mounts, whether the
//     container is privileged, and the runtime hook's [Options] (toolkit's config.toml);
//   - [FromEnv] from an environment list alone;
//   - [FromSpec] from an OCI runtime spec (process.env, mounts,
//     CAP_SYS_ADMIN in the bounding set as "privileged");
//   - toolkit.RequestFromHook from the OCI state a runtime writes to a hook's
//     stdin, with the spec read from the bundle's config.json; the
//     container's rootfs is crun's state "root" when present, else the
//     spec's root.path (toolkit.ContainerFor), as in the toolkit's hooks.
//
// The environment rules, in brief (those of NVIDIA's runtime hook):
// NVIDIA_VISIBLE_DEVICES selects GPUs, with "void" beating "all" beating
// "none", and empty or unset meaning no GPU container — except that unset on
// a legacy CUDA image (CUDA_VERSION set, NVIDIA_REQUIRE_CUDA unset) means
// "all". NV_GPU, nvidia-docker's variable, stands in when
// NVIDIA_VISIBLE_DEVICES is absent. NVIDIA_DRIVER_CAPABILITIES unset or empty
// means compute,utility (every supported class on a legacy image), which
// differs from libnvidia-container's own documented default of utility; see
// package capabilities. Every NVIDIA_REQUIRE_* except NVIDIA_REQUIRE_JETPACK*
// is a requirement, in sorted variable order, plus cuda>=MAJOR.MINOR on a
// legacy image; NVIDIA_DISABLE_REQUIRE drops them all. Device lists are
// deduplicated in first-seen order. Every rejection names the variable and
// its value (at most its first 64 bytes).
//
// The image chooses its environment, so what a request carries is bounded
// ([MaxDevices], [MaxIMEXChannels], [MaxRequirements], [MaxEnvValue],
// [MaxEnvSize]); past a bound the request is refused with
// [ErrTooLarge], and only the variables a request reads are kept.
//
// The package is pure: no privileges, no namespaces, no OS-specific code.
// It reads files only where asked to (a bundle's config.json), with bounded
// sizes ([MaxStateSize], [MaxSpecSize]), and never reads the process
// environment itself. Facts a hook would log (an environment request
// ignored in an unprivileged container) are returned in [Request.Notes].
package request
