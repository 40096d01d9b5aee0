package nvcontainer_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// exampleHost opens a simulated DGX A100 (package nvctest, driver
// 550.54.15) generated under dir the way a runtime opens the real host:
// OpenHost (driver.Open and devices.Discover) with the host's roots (here
// without NVML, from procfs).
func exampleHost(dir string) *nvcontainer.Host {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	sim, err := nvctest.Generate(dir, nvctest.DGXA100, nil)
	if err != nil {
		log.Fatal(err)
	}
	host, err := sim.Open(devices.Procfs)
	if err != nil {
		log.Fatal(err)
	}
	return host
}

// A plan for GPU 2 with compute and utility in a Fedora-like rootfs: the
// libraries go to /usr/lib64 under their versioned names, the SONAME links
// are planned next to them, and only /dev/nvidia2 of the GPU nodes is
// bound.
func ExampleNewPlan() {
	dir, err := os.MkdirTemp("", "plan-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	rootfs := filepath.Join(dir, "rootfs")
	if err := os.MkdirAll(filepath.Join(rootfs, "usr/lib64"), 0o755); err != nil {
		log.Fatal(err)
	}
	host := exampleHost(filepath.Join(dir, "host"))

	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=2", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"})
	if err != nil {
		log.Fatal(err)
	}
	// No PID: the rootfs is read at its path. A hook passes the
	// container's PID and the rootfs is then read as that process sees it.
	p, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{Rootfs: rootfs}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("layout:", p.Layout.LibDir, p.Layout.Lib32Dir, p.Layout.BinDir)
	for _, m := range p.Mounts {
		if m.Kind == nvcontainer.MountDevice || filepath.Base(m.Target) == "libcuda.so.550.54.15" {
			fmt.Println(m.Kind, m.Target, m.Options)
		}
	}
	for _, l := range p.Symlinks[3:5] {
		fmt.Println(l.Path, "->", l.Target)
	}
	fmt.Println("loader cache:", p.LDCache.Dirs, "compat:", p.CUDACompat.Mode, p.CUDACompat.Reason)
	// Output:
	// layout: /usr/lib64 /usr/lib32 /usr/bin
	// library /usr/lib64/libcuda.so.550.54.15 [ro nosuid nodev]
	// device /dev/nvidiactl [ro nosuid noexec]
	// device /dev/nvidia-uvm [ro nosuid noexec]
	// device /dev/nvidia-uvm-tools [ro nosuid noexec]
	// device /dev/nvidia2 [ro nosuid noexec]
	// /usr/lib64/libcuda.so.1 -> libcuda.so.550.54.15
	// /usr/lib64/libcuda.so -> libcuda.so.1
	// loader cache: [/usr/lib64] compat: ldconfig no /usr/local/cuda/compat in the rootfs
}

// An unmet requirement stops planning with nvidia-container-cli's message.
func ExampleNewPlan_requirement() {
	dir, err := os.MkdirTemp("", "plan-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	host := exampleHost(dir)
	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_DRIVER=driver>=560"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
	fmt.Println(err)
	// Output:
	// requirement error: unsatisfied condition: driver>=560
}
