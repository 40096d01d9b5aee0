package toolkit_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
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
		log.Fatal(err)
	}
	fmt.Println(cfg.CLI.Root, cfg.CLI.NoCgroups, !cfg.CLI.NoLoadKmods, cfg.Unknown)
	// Output:
	// /run/nvidia/driver true true [nvidia-container-cli.colour]
}

// What a prestart hook does: read the OCI state a runtime writes on its
// stdin, load the bundle's config.json, and print the nvidia-container-cli
// command line NVIDIA's hook would execute.
func ExampleRequestFromHook() {
	bundle, err := os.MkdirTemp("", "bundle")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(bundle)
	spec := `{"ociVersion":"1.0.2","root":{"path":"/run/ctr1/rootfs"},
		"process":{"env":["NVIDIA_VISIBLE_DEVICES=0,1","NVIDIA_DRIVER_CAPABILITIES=compute,utility","NVIDIA_REQUIRE_CUDA=cuda>=12.4"]}}`
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), []byte(spec), 0o644); err != nil {
		log.Fatal(err)
	}
	stdin := strings.NewReader(`{"ociVersion":"1.0.2","id":"ctr1","pid":4242,"bundle":"` + bundle + `"}`)

	req, ctr, err := toolkit.RequestFromHook(context.Background(), stdin, nil) // nil: the default config
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(toolkit.FormatCommand(toolkit.CLIArgs(req, nil, ctr)))
	// Output:
	// nvidia-container-cli --load-kmods configure --cuda-compat-mode=ldconfig --ldconfig=@/sbin/ldconfig --device=0,1 --compute --utility '--require=cuda>=12.4' --pid=4242 /run/ctr1/rootfs
}

// A prestart hook in full: the config the hook would read (its -config
// flag, NVIDIA_CTK_CONFIG_FILE_PATH, XDG_CONFIG_HOME, /etc), the request
// from the state on stdin, and the command line, or nothing for a
// container that asks for no GPU.
func Example_prestartHook() {
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
