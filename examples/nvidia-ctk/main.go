// Command nvidia-ctk is the CDI part of NVIDIA's nvidia-ctk rebuilt on this
// module: it writes a Container Device Interface spec for the host's GPUs,
// from the same plan nvidia-container-cli configures containers with, and
// lists the CDI devices a runtime would see.
//
//	nvidia-ctk cdi generate [--output FILE] [--format json|yaml] [--vendor V] [--class C]
//	                        [--device-name-strategy index|uuid|type-index]... [--no-all-device]
//	                        [--driver-root DIR] [--dev-root DIR] [--proc-root DIR]
//	                        [--hook-path PATH] [--simulate MACHINE [--simulate-mig INDEX=PROFILE,...]]
//	nvidia-ctk cdi list [--spec-dir DIR]...
//
// The spec's kind is VENDOR/CLASS (nvidia.com/gpu). Each GPU is named by
// every --device-name-strategy ("0", "GPU-…", "gpu0"), each MIG device too
// ("1:0", "MIG-…", "mig1:0"); a GPU in MIG mode is listed only as its MIG
// devices; "all" holds them all. Driver files are bind mounts at their paths
// under the driver root, device nodes carry hostPath, type, major and minor,
// and the loader cache update and symlinks are createContainer hooks running
// --hook-path (examples/nvidia-cdi-hook, a static binary) with an explicit
// environment.
//
// --simulate generates a host (go-nvml mock and driver tree) into a new
// temp dir and writes the spec for it; the dir is kept, since the spec
// points into it. As in NVIDIA's tool, --dev-root is the root /dev is under
// and defaults to the driver root; --proc-root is where procfs is.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"
)

const usageText = `usage: nvidia-ctk cdi COMMAND [flags]

Commands:
  cdi generate   Write a CDI spec for the host's GPUs
  cdi list       List the CDI devices of the specs in the CDI dirs
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	err := dispatch(args, stdout, stderr, log)
	switch {
	case err == nil || errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprint(stderr, usageText)
	default:
		fmt.Fprintf(stderr, "nvidia-ctk: %v\n", err)
	}
	return 1
}

var errUsage = errors.New("usage")

func dispatch(args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	if len(args) < 2 || args[0] != "cdi" {
		if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Fprint(stdout, usageText)
			return nil
		}
		return errUsage
	}
	switch args[1] {
	case "generate":
		return generateCommand(args[2:], stdout, stderr, log)
	case "list":
		return listCommand(args[2:], stdout, stderr, log)
	}
	return errUsage
}

func newFlagSet(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	return fs
}
