package nvcontainer

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// TestNeedsNVMLDiscovery: only a MIG device named by UUID, on a host whose
// MIG devices have no UUID (procfs), sends PrepareHostFor back to NVML.
func TestNeedsNVMLDiscovery(t *testing.T) {
	procfs := &devices.Host{GPUs: []devices.GPU{{UUID: "GPU-a"}, {UUID: "GPU-b", MIGDevices: []devices.MIGDevice{{GI: 1}}}}}
	nvml := &devices.Host{GPUs: []devices.GPU{{UUID: "GPU-a"}, {UUID: "GPU-b", MIGDevices: []devices.MIGDevice{{GI: 1, UUID: "MIG-x"}}}}}
	list := func(ids ...string) *request.Request {
		return &request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: ids}}
	}
	for _, tc := range []struct {
		name string
		h    *devices.Host
		req  *request.Request
		want bool
	}{
		{"MIG UUID on procfs", procfs, list("0", "mig-x"), true},
		{"MIG UUID in a list", procfs, list("0, MIG-x"), true},
		{"MIG index", procfs, list("1:0"), false},
		{"GPU UUID", procfs, list("GPU-b"), false},
		{"all", procfs, &request.Request{Devices: request.Devices{Mode: request.DevicesAll}}, false},
		{"MIG UUID known", nvml, list("MIG-x"), false},
		{"no request", procfs, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, needsNVMLDiscovery(tc.h, tc.req), "needsNVMLDiscovery")
		})
	}
}
