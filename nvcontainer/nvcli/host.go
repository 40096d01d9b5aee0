package nvcli

import (
	"context"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// PrepareHost opens the host as nvidia-container-cli does before a
// command (opts as for nvcontainer.PrepareHost; --load-kmods is
// opts.LoadModules). configure gives its request: the devices are then
// discovered as nvcontainer.PrepareHostFor does, through procfs, with NVML
// started only for a fact the request needs. info, list and
// configure --dry-run give nil: NVML is tried first, as
// nvcontainer.PrepareHost does. An error is a [PrefixInitialization]
// error; the node report, for the caller to log, comes back even then.
func PrepareHost(ctx context.Context, opts *nvcontainer.HostOptions, req *request.Request) (*nvcontainer.Host, *devices.NodeReport, error) {
	var h *nvcontainer.Host
	var rep *devices.NodeReport
	var err error
	if req != nil {
		h, rep, err = nvcontainer.PrepareHostFor(ctx, opts, req)
	} else {
		h, rep, err = nvcontainer.PrepareHost(ctx, opts)
	}
	if err != nil {
		return nil, rep, wrap(PrefixInitialization, err)
	}
	return h, rep, nil
}
