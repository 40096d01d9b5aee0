//go:build cgo

// Package nvmlmock builds go-nvml mock servers that answer like the NVML of
// a real DGX: GPU UUIDs that stay the same from run to run, PCI bus ids laid
// out as on the real board, a configurable driver and CUDA version, and MIG
// devices that can be enumerated through the MIG handle calls.
//
// go-nvml's own servers (pkg/nvml/mock/dgxa100 and friends) leave those out:
// their UUIDs are random, GetPciInfo fills only the PCI device id, and the
// MIG handle calls (GetMaxMigDeviceCount, GetMigDeviceHandleByIndex,
// IsMigDeviceHandle, GetDeviceHandleFromMigDeviceHandle, GetGpuInstanceId,
// GetComputeInstanceId) panic because nothing wires them. New starts from
// those servers and wires what is missing.
//
// The package needs cgo, as go-nvml does: the simulator uses the pure-Go
// package fakenvml, and tests compare fakenvml with these servers.
//
// Each call to New builds an independent server; nothing is shared between
// servers except go-nvml's read-only profile tables, so tests may build and
// use servers in parallel.
package nvmlmock

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/go-nvc/nvc/internal/fakenvml"
)

// DefaultDriverVersion is the driver version New reports when Options leave
// it empty: the version of go-nvml's DGX A100 mock.
const DefaultDriverVersion = fakenvml.DefaultDriverVersion

// ErrUnknownMachine is matched by the error New returns for a machine name it
// does not know.
var ErrUnknownMachine = errors.New("unknown mock machine")

// Options change the server New builds, as they change fakenvml's (the
// same type: a layout means the same on both). A nil *Options means defaults.
type Options = fakenvml.Options

// machine is one go-nvml mock server and the PCI buses its GPUs sit on.
type machine struct {
	build func() *server.Server
	buses []uint32
}

// The bus numbers are those of the boards' eight GPU slots.
var machines = map[string]machine{
	"dgxa100": {dgxa100.New, []uint32{0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd}},
	"dgxh100": {dgxh100.New, []uint32{0x1b, 0x43, 0x52, 0x61, 0x9d, 0xc3, 0xd1, 0xdf}},
	"dgxh200": {dgxh200.New, []uint32{0x1b, 0x43, 0x52, 0x61, 0x9d, 0xc3, 0xd1, 0xdf}},
	"dgxb200": {dgxb200.New, []uint32{0x1b, 0x43, 0x52, 0x61, 0x9d, 0xc3, 0xd1, 0xdf}},
}

// Machines lists the machine names New accepts, sorted.
func Machines() []string {
	names := make([]string, 0, len(machines))
	for n := range machines {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns the go-nvml mock server of machine ("dgxa100", "dgxh100",
// "dgxh200" or "dgxb200") with UUIDs, PCI bus ids, versions and MIG devices
// wired as described in the package documentation.
func New(machine string, opts *Options) (*server.Server, error) {
	m, ok := machines[machine]
	if !ok {
		return nil, fmt.Errorf("building NVML mock: %w %q (known: %s)",
			ErrUnknownMachine, machine, strings.Join(Machines(), ", "))
	}
	o := opts.WithDefaults()
	s := m.build()
	s.DriverVersion = o.DriverVersion
	s.NvmlVersion = nvmlVersion(o.DriverVersion, o.CUDADriverVersion)
	s.CudaDriverVersion = o.CUDADriverVersion
	for i, d := range s.Devices {
		wireDevice(d.(*server.Device), machine, i, m.buses)
	}
	s.DeviceGetHandleByPciBusIdFunc = func(id string) (nvml.Device, nvml.Return) {
		return handleByBusID(s, id)
	}
	if err := applyMIG(s, machine, o.MIG); err != nil {
		return nil, fmt.Errorf("building NVML mock %s: %w", machine, err)
	}
	return s, nil
}

// nvmlVersion is NVML's "<cuda major>.<driver version>" string.
func nvmlVersion(driver string, cuda int) string {
	return fmt.Sprintf("%d.%s", cuda/1000, driver)
}
