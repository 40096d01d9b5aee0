// Package nvcli is the nvidia-container-cli contract, for tools that stand
// in for NVIDIA's command (examples/nvidia-container-cli is one, over this
// package): how its command line becomes a request, a container and a
// host, what info, list and --version print, and which prefix each error
// is printed under.
//
// configure: [ConfigureFlags.Request] reads the options that make the
// request, [Container] reads --pid and ROOTFS (standalone mode, without
// --pid, checks that ROOTFS/proc is a real procfs), [CheckContainer]
// refuses what configure would refuse before anything is planned, and
// [PrepareHost] opens the host (--load-kmods included) as the CLI does,
// NVML only where the request needs it. The plan and its application are
// nvcontainer.NewPlan and Plan.Apply.
//
// info and list: [WriteInfo] prints the driver and the GPUs in the text or
// CSV layout; [List] returns the paths list prints ([DefaultListOptions]
// is a bare list; [IMEXChannels] reads --imex-channel). [WriteVersion]
// prints the seven lines of --version.
//
// Errors: every error of this package is an [*Error] whose Error method
// is the CLI's line after its program name ("input error: …",
// "error parsing IMEX info: …", "initialization error: …"), or an
// *nvcontainer.PlanError, already the CLI's line ("device error: 9:
// unknown device"); [ErrorFor] gives an error of NewPlan, List or Apply
// its prefix. The CLI exits with status 1 after printing one.
package nvcli
