// Package capabilities names the driver capability classes a container can
// ask for — compute, compat32, graphics, utility, video, display and ngx —
// and holds sets of them.
//
// A capability class decides which parts of the host driver a container
// gets: utility brings nvidia-smi and NVML, compute brings libcuda and the
// MPS binaries, graphics the OpenGL/EGL/Vulkan libraries, and so on. The
// classes are those of libnvidia-container's nvidia-container-cli configure
// flags (--compute, --utility, ...) and of the NVIDIA_DRIVER_CAPABILITIES
// variable. This package only names and combines them; package driver maps a
// set to files.
//
// # Parsing and printing
//
// [Parse] reads a comma-separated list such as "compute,utility" (items
// trimmed, empty items ignored, "all" meaning [All]); an unknown word is an
// error that names it. [Set.String] prints the canonical form: names in
// alphabetical order, which is the order nvidia-container-runtime-hook emits
// its flags in and the order of the toolkit's default
// supported-driver-capabilities, so All.String() is
// "compat32,compute,display,graphics,ngx,utility,video".
//
// # The empty set
//
// An empty [Set] (the zero value) means no class, in every call of this
// module that takes a Set: a request or plan with it gets the device nodes
// and no driver file, driver.Driver.Files returns nothing for it, and
// cdispec.FromHost writes a spec without driver files. A caller that
// wants a default says which: [Default], [HookDefault] or [All].
//
// An empty *list* (a string) is another matter: each tool has its own rule
// for it, and the function that reads the list for that tool applies it,
// as below. nvcontainer's Config.SupportedDriverCapabilities, a config
// key whose zero value must be the toolkit's default, reads "" as [All].
//
// # Defaults: two rules for an empty list
//
// An empty list means [Default], utility only: that is the rule the
// libnvidia-container documentation gives for NVIDIA_DRIVER_CAPABILITIES,
// and [Parse] applies it to an empty or blank string.
//
// NVIDIA's runtime hook (nvidia-container-runtime-hook) applies a different
// rule before it calls nvidia-container-cli: unset or empty means
// compute,utility ([HookDefault]), an unset value on a legacy CUDA image means
// every supported class, and the result is limited to the config's
// supported-driver-capabilities. Package nvcontainer builds requests with the
// hook's rule; this package only provides the pieces.
//
// # Implications
//
// libnvidia-container widens two classes when it picks driver files: video
// also brings compute's libraries, and display also brings graphics'
// libraries. [Set.Expand] applies that widening. It is a statement about
// libraries; compute's binaries (the MPS daemon) still come only with compute
// itself, so check the unexpanded set for those.
//
// The package is pure: no I/O, no OS-specific code.
package capabilities
