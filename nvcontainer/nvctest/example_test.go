package nvctest_test

import (
	"fmt"
	"log"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// A simulated DGX H100 with GPU 1 in MIG mode, opened as a runtime opens
// the real host, and a plan for one of its MIG devices. In a test,
// nvctest.NewHost(t, nvctest.DGXH100, opts) does the same in t.TempDir().
func Example() {
	sim, err := nvctest.GenerateTemp(nvctest.DGXH100, &nvctest.Options{MIG: map[int][]string{1: {"3g.40gb", "3g.40gb"}}})
	if err != nil {
		log.Fatal(err)
	}
	defer sim.Remove()

	host, err := sim.Open(devices.Procfs)
	if err != nil {
		log.Fatal(err)
	}
	gpu := host.Devices.GPUs[1]
	fmt.Println(gpu.UUID == nvctest.DGXH100.GPUUUID(1), gpu.BusID, len(gpu.MIGDevices), "MIG devices")

	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=1:1", "NVIDIA_DRIVER_CAPABILITIES=utility"})
	if err != nil {
		log.Fatal(err)
	}
	p, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range p.Mounts {
		if m.Kind == nvcontainer.MountDevice {
			fmt.Println(m.Target)
		}
	}
	// Output:
	// true 00000000:43:00.0 2 MIG devices
	// /dev/nvidiactl
	// /dev/nvidia1
	// /dev/nvidia-caps/nvidia-cap156
	// /dev/nvidia-caps/nvidia-cap157
}
