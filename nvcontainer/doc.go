// Package nvcontainer turns what a container asks for into what it gets: it
// reads the request (NVIDIA_* environment, OCI runtime spec and hook state,
// the toolkit's config.toml), checks NVIDIA_REQUIRE_* requirements, and —
// as those parts land — plans the driver files and devices a container
// receives, applies the plan inside the container's mount namespace, and
// writes it out as a CDI spec. Plan, apply and CDI output are being added;
// the request side described here is complete.
//
// # Requests
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
//   - [NewRequest] from an environment list, the spec's mounts, whether the
//     container is privileged, and a [Config];
//   - [RequestFromEnv] from an environment list alone;
//   - [RequestFromSpec] from an OCI runtime spec (process.env, mounts,
//     CAP_SYS_ADMIN in the bounding set as "privileged");
//   - [RequestFromHook] from the OCI state a runtime writes to a hook's
//     stdin, with the spec read from the bundle's config.json.
//
// The environment rules, in brief (container-toolkit.md §4.2 has them all):
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
// its value.
//
// A request prints as the nvidia-container-cli command line the runtime hook
// would execute ([Request.CLIArgs]), so a dry run shows exactly what the
// original toolchain would have done.
//
// # Requirements
//
// [CheckRequirements] evaluates NVIDIA_REQUIRE_* expressions exactly as
// libnvidia-container's dsl.c does, against a small [RequireFacts] value
// (CUDA and driver versions, and arch and brand per selected device); an
// unmet one gives libnvidia-container's own message. [ValidateRequirement]
// checks one strictly.
//
// # What it needs
//
// The request side is pure: no privileges, no namespaces, no OS-specific
// code. It reads files only where asked to (config.toml, a bundle's
// config.json), with bounded sizes, and never reads the process environment
// itself: environments are parameters. The library does not log; facts a
// hook would log (an environment request ignored in an unprivileged
// container) are returned in [Request.Notes].
//
// Applying a plan (being added) is the only part that acts: it is
// Linux-only and needs root, enters the container's mount namespace on a
// confined thread, mounts through the new mount API (with a bind-by-path
// fallback before Linux 5.12), creates device nodes, edits device cgroups
// and writes the container's ld.so.cache, undoing everything if a step
// fails. It never runs a binary from the container.
//
// # When not to use it
//
// If a runtime already speaks CDI and has a spec for the host, it does not
// need a Request: it resolves CDI device names directly. The runtime hook's
// mode detection (legacy versus cdi versus jit-cdi) and CDI annotations are
// not part of a Request; a CDI name given as a volume mount is kept as a
// device ID string.
package nvcontainer
