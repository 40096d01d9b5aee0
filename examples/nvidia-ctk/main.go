package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"
)

const usageText = `usage: nvidia-ctk cdi|config|runtime|system COMMAND [flags]

Commands:
  cdi generate        Write a CDI spec for the host's GPUs
  cdi list            List the CDI devices of the specs in the CDI dirs
  cdi transform root  Move a spec's paths from one root (--from) to another (--to)
  config [--set K=V]  Print or edit the toolkit's config.toml, keeping other keys
  config default      Print the default config.toml
  runtime configure   Register nvidia-container-runtime in Docker's, containerd's or CRI-O's config
  system create-device-nodes
                      Make the missing NVIDIA device nodes (control and per-GPU)
  system create-dev-char-symlinks
                      Make the /dev/char/MAJOR:MINOR links of the NVIDIA nodes
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
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Fprint(stdout, usageText)
		return nil
	}
	if len(args) >= 1 && args[0] == "runtime" {
		return runtimeCommand(args[1:], stdout, stderr, log)
	}
	if len(args) >= 1 && args[0] == "config" {
		return configCommand(args[1:], stdout, stderr, log)
	}
	if len(args) >= 1 && args[0] == "system" {
		return systemCommand(args[1:], stdout, stderr, log)
	}
	if len(args) < 2 || args[0] != "cdi" {
		return errUsage
	}
	switch args[1] {
	case "generate":
		return generateCommand(args[2:], stdout, stderr, log)
	case "list":
		return listCommand(args[2:], stdout, stderr, log)
	case "transform":
		return transformCommand(args[2:], stdout, stderr)
	}
	return errUsage
}

func newFlagSet(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	return fs
}
