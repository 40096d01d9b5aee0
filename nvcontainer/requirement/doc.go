// Package requirement is the NVIDIA_REQUIRE_* language: it parses
// requirement expressions, checks them against host facts and explains
// the ones that fail, as nvidia-container-cli configure does.
//
// [Check] evaluates NVIDIA_REQUIRE_* expressions exactly as
// libnvidia-container's dsl.c does, against a small [Facts] value
// (CUDA and driver versions, and arch and brand per selected device); an
// unmet one gives libnvidia-container's own message. [Validate]
// checks one strictly. Without NVML the plan takes the CUDA version from
// the driver version (driver.CUDAVersionForDriver), so standard CUDA
// images configure on a procfs host; see [Facts] for facts that
// stay unknown.
//
// The package knows nothing of where facts come from: nvcontainer.NewPlan
// fills [Facts] from the driver and the selected devices.
package requirement
