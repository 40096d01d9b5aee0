package nvcli

import (
	"context"
	"os"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
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

// HostOptions are the options to open the host with for c: the global
// roots (--root, --ldcache, --proc-root, --dev-root) and --load-kmods,
// the command's driver options, PATH and CUDA_MPS_PIPE_DIRECTORY from
// getenv (nil: os.Getenv), and imex, the IMEX channels whose nodes
// --load-kmods creates (none with --no-create-imex-channels).
func (c *Command) HostOptions(getenv func(string) string, imex []uint32) *nvcontainer.HostOptions {
	if getenv == nil {
		getenv = os.Getenv
	}
	g := &c.Global
	d := &driver.Options{Roots: driver.Roots{Driver: g.Root, LDCache: g.LDCache, Proc: g.ProcRoot, Dev: g.DevRoot},
		Path: getenv("PATH"), MPSPipeDir: getenv("CUDA_MPS_PIPE_DIRECTORY"),
		NoPersistenced: c.Driver.NoPersistenced, NoFabricManager: c.Driver.NoFabricManager, NoGSPFirmware: c.Driver.NoGSPFirmware}
	if g.NoCreateIMEXChannels {
		imex = nil
	}
	return &nvcontainer.HostOptions{Driver: d, LoadModules: g.LoadKmods, IMEXChannels: imex}
}
