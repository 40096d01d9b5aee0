package toolkit_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// A config.toml in the toolkit's layout; unknown keys are reported, not
// refused.
func ExampleParseConfig() {
	cfg, err := toolkit.ParseConfig([]byte(`
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
	cfg, _, err := toolkit.FindConfig("", os.Environ())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	req, ctr, err := toolkit.RequestFromHook(context.Background(), os.Stdin, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !req.IsGPU() {
		return // not a GPU container: nothing to do
	}
	fmt.Println(toolkit.FormatCommand(toolkit.CLIArgs(req, cfg, ctr)))
}

// A runc wrapper finds the bundle of `create` and `run` as runc does and
// adds its prestart hook, with an environment of its own, to config.json.
func ExampleAddHook() {
	args := toolkit.ParseRuntimeArgs([]string{"--root", "/run/runc", "create", "--bundle", "/b", "ctr1"})
	fmt.Println(args.Command, args.Bundle, args.IsCreate())

	config := []byte(`{"ociVersion":"1.0.2","process":{"args":["sh"]},"root":{"path":"rootfs"}}`)
	hook := specs.Hook{Path: "/usr/bin/nvidia-container-runtime-hook",
		Args: []string{"nvidia-container-runtime-hook", "prestart"}, Env: []string{"PATH=/usr/bin:/bin"}}
	out, changed, err := toolkit.AddHook(config, "prestart", hook)
	if err != nil {
		log.Fatal(err)
	}
	_, again, _ := toolkit.AddHook(out, "prestart", hook)
	fmt.Println(changed, again)
	// Output:
	// create /b true
	// true false
}
