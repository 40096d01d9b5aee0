package nvcontainer

import (
	"context"
	"strings"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// PrepareHostFor is [PrepareHost] for configuring one container with req,
// as configure and the runtime hook do on every container start: with
// opts.Backend empty the devices are discovered through procfs, so NVML is
// not started (its start-up costs hundreds of milliseconds to seconds on a
// GPU without persistence mode), and the returned Host's NVML is set for
// PlanOptions.NVML: opts.NVML when set (a helper process's,
// devices.NewNVMLHelper), else in a cgo build libnvidia-ml.so.1 of the
// driver root, loaded and started only when a requirement needs a fact
// procfs lacks (devices.NewLazyNVML); without cgo, nil.
//
// The result of a plan does not change: the one request procfs cannot
// serve, a MIG device named by UUID (procfs has no MIG UUIDs), is
// discovered again with devices.Auto, as PrepareHost would have. An
// explicit opts.Backend, or opts.Driver.NVML (a simulated host), is used
// as PrepareHost uses it, with Host.NVML nil. ctx bounds the modprobe runs,
// as for PrepareHost.
func PrepareHostFor(ctx context.Context, opts *HostOptions, req *request.Request) (*Host, *devices.NodeReport, error) {
	var o HostOptions
	if opts != nil {
		o = *opts
	}
	if o.Backend != "" || (o.Driver != nil && o.Driver.NVML != nil) {
		return PrepareHost(ctx, &o)
	}
	o.Backend = devices.Procfs
	h, rep, err := PrepareHost(ctx, &o)
	if err != nil {
		return h, rep, err
	}
	d := o.Driver
	if d == nil {
		d = &driver.Options{}
	}
	if needsNVMLDiscovery(h.Devices, req) {
		h, err = OpenHost(ctx, o.withNVML(d, devices.Auto), devices.Auto)
		return h, rep, err
	}
	h.NVML = o.NVML
	if h.NVML == nil {
		h.NVML = devices.NewLazyNVML(&devices.Options{Roots: d.Roots})
	}
	return h, rep, nil
}

// needsNVMLDiscovery says whether req names a MIG device by UUID on a host
// whose MIG devices have none (discovered through procfs).
func needsNVMLDiscovery(h *devices.Host, req *request.Request) bool {
	if req == nil || req.Devices.Mode != request.DevicesList || !h.LacksMIGUUIDs() {
		return false
	}
	for _, ids := range req.Devices.IDs {
		for _, id := range strings.Split(ids, ",") {
			if id = strings.TrimSpace(id); len(id) >= 4 && strings.EqualFold(id[:4], "MIG-") {
				return true
			}
		}
	}
	return false
}
