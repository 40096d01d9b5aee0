package main

import (
	"context"
	"io"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

const configureSynopsis = `nvidia-container-cli configure [OPTION...] ROOTFS
Configure a container with GPU support by exposing device drivers to it.

The container is the process PID, which must be alive and in another mount
namespace than this command's (a host process is refused); or, without --pid,
the parent process, whose procfs is then ROOTFS/proc, which must be a procfs
mount, and whose mount namespace must be this command's (standalone mode is
for a hook running inside the container's namespaces). It must be created but
not started, with the host filesystem still visible. Everything is undone if a
step fails.
The container's ld.so.cache is written in Go: no ldconfig is run, and
--ldconfig is accepted for compatibility only.`

// configureOptions are configure's command line.
type configureOptions struct {
	flags    nvcli.ConfigureFlags
	plan     nvcontainer.PlanOptions
	driver   driver.Options
	pid      int
	ldconfig string
	dryRun   bool
}

func (o *configureOptions) flagSet() *pflag.FlagSet {
	fs := newFlagSet("configure")
	f := &o.flags
	fs.IntVarP(&o.pid, "pid", "p", 0, "Container `PID` (default: the parent process, standalone mode)")
	fs.StringArrayVarP(&f.Devices, "device", "d", nil, "Devices to isolate: `ID`s (index, UUID, bus ID, MIG device) or all")
	fs.StringArrayVarP(&f.Requirements, "require", "r", nil, "Check the container requirement `EXPR` (repeatable)")
	fs.StringVarP(&o.ldconfig, "ldconfig", "l", "", "Accepted for compatibility: no ldconfig is run, the cache is written in Go (`PATH`)")
	for _, c := range []struct {
		name, short string
		c           capabilities.Capability
	}{{"compute", "c", capabilities.Compute}, {"utility", "u", capabilities.Utility}, {"video", "v", capabilities.Video},
		{"graphics", "g", capabilities.Graphics}, {"display", "D", capabilities.Display}, {"ngx", "n", capabilities.NGX},
		{"compat32", "", capabilities.Compat32}} {
		fs.BoolFuncP(c.name, c.short, "Enable "+c.name+" capability", func(string) error {
			f.Capabilities |= capabilities.Of(c.c)
			return nil
		})
	}
	fs.StringArrayVar(&f.MIGConfig, "mig-config", nil, "Enable MIG configuration of `ID` (only all)")
	fs.StringArrayVar(&f.MIGMonitor, "mig-monitor", nil, "Enable MIG monitoring of `ID` (only all)")
	fs.StringArrayVar(&f.IMEXChannels, "imex-channel", nil, "IMEX `CHANNEL`s to inject")
	fs.BoolVar(&o.plan.NoCgroups, "no-cgroups", false, "Don't use cgroup enforcement")
	fs.BoolVar(&o.plan.NoDevbind, "no-devbind", false, "Don't bind mount devices")
	fs.BoolVar(&o.driver.NoPersistenced, "no-persistenced", false, "Don't include the NVIDIA persistenced socket")
	fs.BoolVar(&o.driver.NoFabricManager, "no-fabricmanager", false, "Don't include the NVIDIA fabricmanager socket")
	fs.BoolVar(&o.driver.NoGSPFirmware, "no-gsp-firmware", false, "Don't include GSP firmware")
	fs.BoolVar(&f.NoCntlibs, "no-cntlibs", false, "Don't use CUDA compat libraries from the container (--cuda-compat-mode=disabled)")
	fs.StringArrayVar(&f.CUDACompatModes, "cuda-compat-mode", nil, "CUDA forward compatibility `MODE`: mount, ldconfig or disabled (default ldconfig)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "Print the plan as JSON and change nothing")
	return fs
}

// configureCommand plans and applies the configuration of one container.
func configureCommand(g *globals, args []string, stdout io.Writer) error {
	var o configureOptions
	fs := o.flagSet()
	if err := parse(fs, configureSynopsis, args, stdout); err != nil {
		return err
	}
	if err := positional(fs, 1); err != nil {
		return err
	}
	ctr, procRoot, err := nvcli.Container(o.pid, fs.Arg(0))
	if err != nil {
		return err
	}
	o.plan.ProcRoot = procRoot // the rootfs is read as the container's process sees it
	req, err := o.flags.Request()
	if err != nil {
		return err
	}
	if !o.dryRun {
		if err := nvcli.CheckContainer(ctr, procRoot); err != nil {
			return err
		}
	}
	plan, err := makePlan(g, &o, req, ctr)
	if err != nil || o.dryRun {
		return printPlan(plan, err, stdout)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := plan.Apply(ctx, ctr, &nvcontainer.ApplyOptions{ProcRoot: procRoot}); err != nil {
		return nvcli.ErrorFor(err) // undone: the simulated host can go
	}
	g.applied = true
	g.log.Info("configured", "pid", ctr.PID, "rootfs", ctr.Rootfs, "mounts", len(plan.Mounts), "gpus", len(plan.GPUs))
	return nil
}

func makePlan(g *globals, o *configureOptions, req *request.Request, ctr nvcontainer.Container) (*nvcontainer.Plan, error) {
	fast := req // configure: NVML only when needed; --dry-run prints the plan with NVML's CUDA version
	if o.dryRun {
		fast = nil
	}
	h, err := g.openHost(&o.driver, req.IMEXChannels, fast)
	if err != nil {
		return nil, err
	}
	o.plan.NVML = h.NVML
	plan, err := nvcontainer.NewPlan(h, req, ctr, &o.plan)
	if err != nil {
		return nil, nvcli.ErrorFor(err)
	}
	for _, w := range plan.Warnings {
		g.log.Warn(w)
	}
	return plan, nil
}

func printPlan(plan *nvcontainer.Plan, err error, stdout io.Writer) error {
	if err != nil {
		return err
	}
	data, err := plan.JSON()
	if err != nil {
		return err
	}
	_, err = stdout.Write(data)
	return err
}
