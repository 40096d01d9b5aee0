package cdispec_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// A CDI spec for every GPU of a simulated DGX A100 (package nvctest,
// driver 550.54.15), as nvidia-ctk cdi generate makes one, in YAML.
func ExampleFromHost() {
	sim, err := nvctest.GenerateTemp(nvctest.DGXA100, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sim.Remove()
	host, err := sim.Open(devices.Procfs) // as a runtime opens the real host, here without NVML
	if err != nil {
		log.Fatal(err)
	}
	spec, err := cdispec.FromHost(host, capabilities.Of(capabilities.Compute), &cdispec.Options{
		NameStrategies: []cdispec.NameStrategy{cdispec.NameIndex},
	})
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, d := range spec.Devices {
		names = append(names, d.Name)
	}
	fmt.Println(strings.Join(names, " "))
	for _, h := range spec.ContainerEdits.Hooks {
		fmt.Println(h.HookName, h.Args[:2], h.Env)
	}
	b, err := cdispec.Marshal(spec, cdispec.FormatYAML)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", b[:42])
	// Output:
	// 0 1 2 3 4 5 6 7 all
	// createContainer [nvidia-cdi-hook create-symlinks] [NVIDIA_CTK_DEBUG=false]
	// createContainer [nvidia-cdi-hook enable-cuda-compat] [NVIDIA_CTK_DEBUG=false]
	// createContainer [nvidia-cdi-hook update-ldcache] [NVIDIA_CTK_DEBUG=false]
	// createContainer [nvidia-cdi-hook disable-device-node-modification] [NVIDIA_CTK_DEBUG=false]
	// createContainer [nvidia-cdi-hook update-application-profile] [NVIDIA_CTK_DEBUG=false]
	// ---
	// cdiVersion: 0.5.0
	// kind: nvidia.com/gpu
}

// A plan made without a rootfs, for two GPUs, written as a CDI spec: one
// device per GPU and its nodes, the shared nodes spec-wide.
func ExampleFromPlan() {
	sim, err := nvctest.GenerateTemp(nvctest.DGXA100, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sim.Remove()
	host, err := sim.Open(devices.Procfs) // as a runtime opens the real host, here without NVML
	if err != nil {
		log.Fatal(err)
	}
	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=1,6", "NVIDIA_DRIVER_CAPABILITIES=utility"})
	if err != nil {
		log.Fatal(err)
	}
	p, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	spec, err := cdispec.FromPlan(p, &cdispec.Options{
		NameStrategies: []cdispec.NameStrategy{cdispec.NameTypeIndex},
		NoAllDevice:    true,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range spec.Devices {
		n := d.ContainerEdits.DeviceNodes[0]
		fmt.Printf("%s=%s: %s %s %d:%d\n", spec.Kind, d.Name, n.Path, n.Type, n.Major, n.Minor)
	}
	for _, n := range spec.ContainerEdits.DeviceNodes {
		fmt.Println("shared:", n.Path)
	}
	// Output:
	// nvidia.com/gpu=gpu1: /dev/nvidia1 c 195:1
	// nvidia.com/gpu=gpu6: /dev/nvidia6 c 195:6
	// shared: /dev/nvidiactl
}
