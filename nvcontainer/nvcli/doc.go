// Package nvcli is the nvidia-container-cli contract, for tools that stand
// in for NVIDIA's command (examples/nvidia-container-cli is one, over this
// package): how its command line becomes a request, a container and a
// host, what info, list and --version print, and which prefix each error
// is printed under.
//
// The command line: [Parse] reads it as glibc's argp reads
// nvidia-container-cli's (global options in order up to the command, the
// command's options and operands in any order, short clusters, unique
// long prefixes, -?/--help, --usage, -V/--version) into a [Command]: the
// [Global] options, the command's [InfoOptions], [ListOptions] or
// [ConfigureOptions], or the help text to print. A line argp refuses is a
// [*UsageError] in argp's and getopt's words; [Report] prints any error
// as the CLI does and gives the exit status (1, as libnvidia-container
// sets argp_err_exit_status). [Command.HostOptions] gives the options to
// open the host with. [Global.DebugFile] is --debug or NVC_DEBUG_FILE, and
// [OpenDebugLog] writes libnvidia-container's debug log format.
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
