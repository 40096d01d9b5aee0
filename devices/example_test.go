package devices_test

import (
	"context"
	"fmt"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// Discover a simulated DGX A100 (GPU 0 in MIG mode) through procfs, the
// path that needs no NVML, then select devices as NVIDIA_VISIBLE_DEVICES
// would.
func ExampleDiscover() {
	sim, err := nvctest.GenerateTemp(nvctest.DGXA100, &nvctest.Options{MIG: map[int][]string{0: {"3g.20gb"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sim.Remove()
	host, err := devices.Discover(context.Background(), &devices.Options{
		Backend: devices.Procfs,
		Roots:   sim.Roots,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	drv, err := driver.Open(&driver.Options{Roots: sim.Roots}) // the driver's version is package driver's
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("driver", drv.Version().NVRM, "via", host.Backend)
	for _, g := range host.GPUs[:3] {
		fmt.Printf("GPU %d %s %s %s %d:%d\n", g.Index, g.UUID, g.BusID, g.Node.Path, g.Node.Major, g.Node.Minor)
	}
	m := host.GPUs[0].MIGDevices[0]
	fmt.Printf("MIG 0:%d gi %d ci %d %s %s\n", m.Index, m.GI, m.CI, m.GIAccess.Proc, m.GIAccess.Node.Path)

	sel, err := host.Select("0:0,2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("selected GPUs", len(sel.GPUs), "MIG devices", len(sel.MIGDevices))
	_, err = host.Select("9")
	fmt.Println(err)
	// Output:
	// driver 550.54.15 via procfs
	// GPU 0 GPU-c6447c07-9c71-5438-bb3d-e54fd5f6494c 00000000:07:00.0 /dev/nvidia0 195:0
	// GPU 1 GPU-fcdf8116-d211-50e1-995c-b4700326ab4d 00000000:0f:00.0 /dev/nvidia1 195:1
	// GPU 2 GPU-39bff69e-b451-540b-881e-7f5d1997d5f8 00000000:47:00.0 /dev/nvidia2 195:2
	// MIG 0:0 gi 1 ci 0 /proc/driver/nvidia/capabilities/gpu0/mig/gi1/access /dev/nvidia-caps/nvidia-cap12
	// selected GPUs 2 MIG devices 1
	// unknown device: 9
}
