package request_test

import (
	"fmt"

	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// An environment becomes a request, and the request the command line
// nvidia-container-runtime-hook would run.
func ExampleFromEnv() {
	req, err := request.FromEnv([]string{
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
	args := toolkit.CLIArgs(req, nil, nvcontainer.Container{PID: 4242, Rootfs: "/run/bundle/rootfs"})
	fmt.Println(toolkit.FormatCommand(args))
	// Output:
	// GPU container: true
	// devices: 1,0,2
	// capabilities: compute,utility,video
	// requirements: [cuda>=12.4 brand=tesla,driver>=470,driver<471]
	// nvidia-container-cli --load-kmods configure --cuda-compat-mode=ldconfig --ldconfig=@/sbin/ldconfig --device=1,0,2 --compute --utility --video '--require=cuda>=12.4 brand=tesla,driver>=470,driver<471' --pid=4242 /run/bundle/rootfs
}

// A legacy CUDA image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA) gets every
// GPU, every supported capability and an implicit cuda>= requirement.
func ExampleFromEnv_legacy() {
	req, err := request.FromEnv([]string{"CUDA_VERSION=11.8.0"})
	if err != nil {
		panic(err)
	}
	fmt.Println(req.Devices, req.Capabilities, req.Requirements)
	// Output:
	// all compat32,compute,display,graphics,ngx,utility,video [cuda>=11.8]
}
