package nvcontainer_test

import (
	"context"
	"fmt"
	"os"

	"github.com/go-nvc/nvc/nvcontainer"
)

// An environment becomes a request, and the request the command line
// nvidia-container-runtime-hook would run.
func ExampleRequestFromEnv() {
	req, err := nvcontainer.RequestFromEnv([]string{
		"PATH=/usr/bin",
		"NVIDIA_VISIBLE_DEVICES= 1 ,0,1,,2",
		"NVIDIA_DRIVER_CAPABILITIES=compute,utility,video",
		"NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("GPU container:", req.IsGPU())
	fmt.Println("devices:", req.Devices)
	fmt.Println("capabilities:", req.Capabilities)
	fmt.Println("requirements:", req.Requirements)
	args := req.CLIArgs(nil, nvcontainer.Container{PID: 4242, Rootfs: "/run/bundle/rootfs"})
	fmt.Println(nvcontainer.FormatCommand(args))
	// Output:
	// GPU container: true
	// devices: 1,0,2
	// capabilities: compute,utility,video
	// requirements: [cuda>=12.4 brand=tesla,driver>=470,driver<471]
	// nvidia-container-cli --load-kmods configure --cuda-compat-mode=ldconfig --ldconfig=@/sbin/ldconfig --device=1,0,2 --compute --utility --video '--require=cuda>=12.4 brand=tesla,driver>=470,driver<471' --pid=4242 /run/bundle/rootfs
}

// A legacy CUDA image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA) gets every
// GPU, every supported capability and an implicit cuda>= requirement.
func ExampleRequestFromEnv_legacy() {
	req, err := nvcontainer.RequestFromEnv([]string{"CUDA_VERSION=11.8.0"})
	if err != nil {
		panic(err)
	}
	fmt.Println(req.Devices, req.Capabilities, req.Requirements)
	// Output:
	// all compat32,compute,display,graphics,ngx,utility,video [cuda>=11.8]
}

// Requirements are evaluated against the driver and each selected GPU.
func ExampleCheckRequirements() {
	host := nvcontainer.RequireFacts{
		CUDAVersion:   "12.4",
		DriverVersion: "550.54.15",
		Devices:       []nvcontainer.RequireDevice{{Arch: "8.0", Brand: "Tesla"}},
	}
	for _, req := range []string{
		"cuda>=12.4 brand=tesla,driver>=470,driver<471",
		"cuda>=12.8",
		"brand=geforce arch>=9.0",
		"cuda>=12.x",
	} {
		fmt.Println(nvcontainer.CheckRequirements([]string{req}, host))
	}
	// Output:
	// <nil>
	// unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container
	// unsatisfied condition: brand=geforce
	// invalid expression: term "cuda>=12.x" at offset 0 of requirement "cuda>=12.x": version "12.x" is not made of digits and dots
}

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
	fmt.Println(nvcontainer.FormatCommand(req.CLIArgs(cfg, ctr)))
}
