package nvcontainer

import (
	"context"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
)

// PrepareHost opens the host as nvidia-container-cli does before each
// command, and nvidia-container-runtime-hook before it configures a
// container: with opts.LoadModules it first loads the kernel modules and
// creates the missing device nodes (devices.CreateNodes, with the driver
// options' Roots: under a driver root other than /, modprobe runs chrooted
// into it and, without a dev root, the nodes are made in <driver root>/dev,
// as with nvidia-container-cli --root --load-kmods),
// then opens the driver and discovers the devices ([OpenHost]). The node
// report is for the caller to log; it is nil without LoadModules, and
// returned even when a later step fails. ctx bounds the modprobe runs
// (see devices.CreateNodes). On WSL2 (/dev/dxg under the dev root) nothing
// is loaded or made, as libnvidia-container skips it there: the report
// says so.
func PrepareHost(ctx context.Context, opts *HostOptions) (*Host, *devices.NodeReport, error) {
	var o HostOptions
	if opts != nil {
		o = *opts
	}
	d := o.Driver
	if d == nil {
		d = &driver.Options{}
	}
	var rep *devices.NodeReport
	if o.LoadModules && onWSL(d.Roots) {
		rep = &devices.NodeReport{Skipped: "WSL2 host (" + devices.DevDXG + "): no NVIDIA kernel modules or nodes to make"}
	} else if o.LoadModules {
		var err error
		rep, err = devices.CreateNodes(ctx, &devices.NodeOptions{Roots: d.Roots, LoadModules: true, IMEXChannels: o.IMEXChannels})
		if err != nil {
			return nil, rep, err
		}
	}
	h, err := OpenHost(ctx, o.withNVML(d, o.Backend), o.Backend)
	return h, rep, err
}
