package driver_test

import (
	"fmt"
	"log"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// Lists the compute libraries of a generated host (a DGX A100 with driver
// 550.54.15, Debian layout), found through its ld.so.cache. Without NVML
// the version comes from the host's /proc/driver/nvidia/version.
func ExampleDriver_Files() {
	sim, err := nvctest.GenerateTemp(nvctest.DGXA100, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sim.Remove()
	d, err := driver.Open(&driver.Options{Roots: sim.Roots})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("NVRM version:", d.Version().NVRM, "from", d.Version().Source)
	files, err := d.Files(capabilities.Of(capabilities.Compute))
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files.Libraries {
		fmt.Println(f.Path)
	}
	// Output:
	// NVRM version: 550.54.15 from procfs
	// /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libcudadebugger.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-gpucomp.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-fatbinaryloader.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-allocator.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-compiler.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-pkcs11.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-pkcs11-openssl3.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-nvvm.so.550.54.15
	// /usr/lib/x86_64-linux-gnu/libnvidia-tileiras.so.550.54.15
}
