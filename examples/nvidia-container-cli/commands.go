package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// info reports the driver and the GPUs, as nvidia-container-cli info does.
func (a *app) info(stdout io.Writer) error {
	h, err := a.openHost(nil, nil)
	if err != nil {
		return err
	}
	switch h.Devices.Backend {
	case devices.NVML:
	case devices.WSL:
		fmt.Fprintf(a.stderr, "%s: WSL2 host: every GPU is behind %s, none is listed; the CUDA version needs NVML\n", a.cmd.Prog, devices.DevDXG)
	default:
		fmt.Fprintf(a.stderr, "%s: warning: NVML unavailable (%s): brand, architecture and CUDA version are unknown\n", a.cmd.Prog, h.Devices.NVMLError)
	}
	return nvcli.WriteInfo(stdout, h, &a.cmd.Info)
}

// list prints the paths configure would bring into a container, as
// nvidia-container-cli list does.
func (a *app) list(stdout io.Writer) error {
	h, err := a.openHost(a.cmd.List.IMEXChannels, nil)
	if err != nil {
		return err
	}
	paths, err := nvcli.List(h, &a.cmd.List)
	if err != nil {
		return nvcli.ErrorFor(err)
	}
	w := bufio.NewWriter(stdout)
	for _, p := range paths {
		fmt.Fprintln(w, p)
	}
	return w.Flush()
}

// configure plans and applies the configuration of one container, or
// prints the plan with --dry-run.
func (a *app) configure(stdout io.Writer) error {
	o := &a.cmd.Configure
	ctr, procRoot, req, err := a.target()
	if err != nil {
		return err
	}
	fast := req // NVML only when needed; --dry-run prints the plan with NVML's CUDA version
	if o.DryRun {
		fast = nil
	}
	h, err := a.openHost(req.IMEXChannels, fast)
	if err != nil {
		return err
	}
	opts := &nvcontainer.PlanOptions{NoCgroups: o.NoCgroups, NoDevbind: o.NoDevbind, ProcRoot: procRoot, NVML: h.NVML}
	plan, err := nvcontainer.NewPlan(h, req, ctr, opts)
	if err != nil {
		return nvcli.ErrorFor(err)
	}
	return a.run(stdout, plan, ctr, &nvcontainer.ApplyOptions{ProcRoot: procRoot, Libraries: h.Driver}, "configured", "gpus", len(plan.GPUs))
}

// target is configure's container (checked unless --dry-run), its
// procfs root and the request of the command line.
func (a *app) target() (nvcontainer.Container, string, *request.Request, error) {
	o := &a.cmd.Configure
	ctr, procRoot, err := nvcli.Container(o.PID, o.Rootfs)
	if err != nil {
		return ctr, "", nil, err
	}
	req, err := o.Flags.Request()
	if err != nil {
		return ctr, "", nil, err
	}
	if !o.DryRun {
		if err := nvcli.CheckContainer(ctr, procRoot); err != nil {
			return ctr, "", nil, err
		}
	}
	return ctr, procRoot, req, nil
}

// run prints plan with --dry-run, or applies it to ctr with opts and
// logs what with the mount count and attrs; in a user namespace it logs first that
// the device cgroup is left to the runtime.
func (a *app) run(stdout io.Writer, plan *nvcontainer.Plan, ctr nvcontainer.Container, opts *nvcontainer.ApplyOptions, what string, attrs ...any) error {
	for _, w := range plan.Warnings {
		a.log.Warn(w)
	}
	if a.cmd.Configure.DryRun {
		data, err := plan.JSON()
		if err != nil {
			return err
		}
		_, err = stdout.Write(data)
		return err
	}
	if plan.DeviceRulesLeftToRuntime() {
		a.log.Info("device cgroup left to the runtime: running in a user namespace", "rules", len(plan.CgroupRules))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := plan.Apply(ctx, ctr, opts); err != nil {
		return nvcli.ErrorFor(err) // undone: the simulated host can go
	}
	a.applied = true
	a.log.Info(what, append([]any{"pid", ctr.PID, "rootfs", ctr.Rootfs, "mounts", len(plan.Mounts)}, attrs...)...)
	return nil
}
