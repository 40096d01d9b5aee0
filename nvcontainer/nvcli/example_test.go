package nvcli_test

import (
	"fmt"
	"io/fs"
	"log"
	"os"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// The configure options of nvidia-container-cli make a request: repeated
// --device values are joined, no --device at all would mean the driver
// without a GPU.
func ExampleConfigureFlags_Request() {
	f := nvcli.ConfigureFlags{
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
	host, dir := simulatedHost()
	defer os.RemoveAll(dir)
	paths, err := nvcli.List(host, &nvcli.ListOptions{Devices: []string{"3"}, Binaries: true})
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

// What `nvidia-container-cli info --csv` prints on a simulated DGX A100
// whose GPUs were found through procfs: brand, architecture and CUDA
// version are only known to NVML.
func ExampleWriteInfo() {
	host, dir := simulatedHost()
	defer os.RemoveAll(dir)
	host.Devices.GPUs = host.Devices.GPUs[:2]
	if err := nvcli.WriteInfo(os.Stdout, host, &nvcli.InfoOptions{CSV: true}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// NVRM version,CUDA version
	// 550.54.15,N/A
	//
	// Device Index,Device Minor,Model,Brand,GPU UUID,Bus Location,Architecture
	// 0,0,Mock NVIDIA A100-SXM4-40GB,N/A,GPU-c6447c07-9c71-5438-bb3d-e54fd5f6494c,00000000:07:00.0,N/A
	// 1,1,Mock NVIDIA A100-SXM4-40GB,N/A,GPU-fcdf8116-d211-50e1-995c-b4700326ab4d,00000000:0f:00.0,N/A
}

// An error of a step of Plan.Apply prints as nvidia-container-cli prints
// it, after the program name: the loader cache step is an ldcache error,
// the others mount errors.
func ExampleErrorFor() {
	var err error = &nvcontainer.ApplyError{Step: nvcontainer.StepLDCache, Path: "/etc/ld.so.cache", Err: fs.ErrPermission}
	fmt.Println("nvidia-container-cli:", nvcli.ErrorFor(err))
	_, _, err = nvcli.Container(0, "rootfs")
	fmt.Println("nvidia-container-cli:", err)
	// Output:
	// nvidia-container-cli: ldcache error: applying plan: ldcache "/etc/ld.so.cache": permission denied
	// nvidia-container-cli: input error: invalid rootfs directory
}

// simulatedHost generates a DGX A100 (package nvctest) in a new temp dir
// and opens it as OpenHost opens a real host, finding the GPUs through
// procfs. The caller removes dir.
func simulatedHost() (host *nvcontainer.Host, dir string) {
	sim, err := nvctest.GenerateTemp(nvctest.DGXA100, nil)
	if err != nil {
		log.Fatal(err)
	}
	host, err = sim.Open(devices.Procfs)
	if err != nil {
		log.Fatal(err)
	}
	return host, sim.Roots.Driver
}

// Parse reads a command line as nvidia-container-cli's argp parsers do;
// Report prints a refused one in argp's words and gives the exit status.
func ExampleParse() {
	cmd, err := nvcli.Parse([]string{"nvidia-container-cli", "-k", "list", "-ld0"}, nil)
	if err != nil {
		return
	}
	fmt.Println(cmd.Name, cmd.Global.LoadKmods, cmd.List.Devices, cmd.List.Libraries)
	_, err = nvcli.Parse([]string{"nvidia-container-cli", "info", "--json"}, nil)
	fmt.Println("exit", nvcli.Report(os.Stdout, "nvidia-container-cli", err))
	// Output:
	// list true [0] true
	// nvidia-container-cli info: unrecognized option '--json'
	// Try `nvidia-container-cli info --help' or `nvidia-container-cli info --usage'
	// for more information.
	// exit 1
}
