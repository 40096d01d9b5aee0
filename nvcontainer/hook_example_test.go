package nvcontainer_test

import (
	"context"
	"fmt"
	"os"

	"github.com/go-nvc/nvc/nvcontainer"
)

// A config.toml in the toolkit's layout; unknown keys are reported, not
// refused.
func ExampleParseConfig() {
	cfg, err := nvcontainer.ParseConfig([]byte(`
supported-driver-capabilities = "compute,utility"
[nvidia-container-cli]
root = "/run/nvidia/driver"
no-cgroups = true
colour = "green"
`))
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.CLI.Root, cfg.CLI.NoCgroups, !cfg.CLI.NoLoadKmods, cfg.Unknown)
	// Output:
	// /run/nvidia/driver true true [nvidia-container-cli.colour]
}

// What a prestart hook does: read the state on stdin, load the bundle's
// config.json and the config, and build the request.
func ExampleRequestFromHook() {
	cfg, _, err := nvcontainer.FindConfig("", os.Environ())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	req, ctr, err := nvcontainer.RequestFromHook(context.Background(), os.Stdin, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !req.IsGPU() {
		return // not a GPU container: nothing to do
	}
	fmt.Println(nvcontainer.FormatCommand(nvcontainer.CLIArgs(req, cfg, ctr)))
}
