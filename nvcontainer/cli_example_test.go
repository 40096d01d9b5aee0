package nvcontainer_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
)

// The configure options of nvidia-container-cli make a request: repeated
// --device values are joined, no --device at all would mean the driver
// without a GPU.
func ExampleConfigureFlags_Request() {
	f := nvcontainer.ConfigureFlags{
		Devices:         []string{"0,1", "GPU-4f6a"},
		Capabilities:    capabilities.Of(capabilities.Compute, capabilities.Utility),
		Requirements:    []string{"cuda>=12.0"},
		CUDACompatModes: []string{"ldconfig"},
	}
	req, err := f.Request()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(req.Devices.Mode, req.Devices, req.Capabilities, req.Requirements, req.CUDACompatMode)
	// Output: list 0,1,GPU-4f6a compute,utility [cuda>=12.0] ldconfig
}

// What `nvidia-container-cli list -d 3 -b` prints on a simulated DGX A100:
// the control nodes, the selected GPU's node, the driver's binaries.
func ExampleList() {
	dir, err := os.MkdirTemp("", "list-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fh, err := fakehost.Generate(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	host, err := nvcontainer.OpenHost(&driver.Options{Root: fh.Root, ProcRoot: fh.ProcRoot, DevRoot: fh.DevRoot}, "procfs")
	if err != nil {
		log.Fatal(err)
	}
	paths, err := nvcontainer.List(host, &nvcontainer.ListOptions{Devices: []string{"3"}, Binaries: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(paths, "\n"))
	// Output:
	// /dev/nvidiactl
	// /dev/nvidia-uvm
	// /dev/nvidia-uvm-tools
	// /dev/nvidia-modeset
	// /dev/nvidia3
	// /usr/bin/nvidia-smi
	// /usr/bin/nvidia-debugdump
	// /usr/bin/nvidia-persistenced
	// /usr/bin/nv-fabricmanager
	// /usr/bin/nvidia-cuda-mps-control
	// /usr/bin/nvidia-cuda-mps-server
}

// A runc wrapper finds the bundle of `create` and `run` as runc does and
// adds its prestart hook, with an environment of its own, to config.json.
func ExampleAddHook() {
	args := nvcontainer.ParseRuntimeArgs([]string{"--root", "/run/runc", "create", "--bundle", "/b", "ctr1"})
	fmt.Println(args.Command, args.Bundle, args.IsCreate())

	config := []byte(`{"ociVersion":"1.0.2","process":{"args":["sh"]},"root":{"path":"rootfs"}}`)
	hook := specs.Hook{Path: "/usr/bin/nvidia-container-runtime-hook",
		Args: []string{"nvidia-container-runtime-hook", "prestart"}, Env: []string{"PATH=/usr/bin:/bin"}}
	out, changed, err := nvcontainer.AddHook(config, "prestart", hook)
	if err != nil {
		log.Fatal(err)
	}
	_, again, _ := nvcontainer.AddHook(out, "prestart", hook)
	fmt.Println(changed, again)
	// Output:
	// create /b true
	// true false
}
