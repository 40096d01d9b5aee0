package nvcontainer

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/requirement"
)

// selectDevices resolves the request's device IDs and MIG config/monitor
// lists with package devices.
func (pl *planner) selectDevices() error {
	sel, err := pl.selection()
	if err != nil {
		return stageErr(StageDevice, err)
	}
	pl.sel = sel
	if pl.req.MIGConfig != "" {
		if pl.migConfig, err = pl.dev.SelectMIGConfig(pl.req.MIGConfig, sel); err != nil {
			return stageErr(StageMIGConfig, err)
		}
	}
	if pl.req.MIGMonitor != "" {
		if pl.migMonitor, err = pl.dev.SelectMIGMonitor(pl.req.MIGMonitor, sel); err != nil {
			return stageErr(StageMIGMonitor, err)
		}
	}
	pl.recordDevices()
	return nil
}

func (pl *planner) selection() (*devices.Selection, error) {
	switch pl.req.Devices.Mode {
	case request.DevicesAll:
		return pl.dev.Select("all")
	case request.DevicesList:
		return pl.dev.Select(strings.Join(pl.req.Devices.IDs, ","))
	}
	return &devices.Selection{}, nil
}

// recordDevices lists the selection in the plan.
func (pl *planner) recordDevices() {
	for _, g := range pl.sel.GPUs {
		pl.p.GPUs = append(pl.p.GPUs, PlannedGPU{Index: g.Index, Minor: g.Minor, UUID: g.UUID, BusID: g.BusID, MIGEnabled: g.MIGEnabled})
	}
	for _, m := range pl.sel.MIGDevices {
		pl.p.MIGDevices = append(pl.p.MIGDevices, PlannedMIG{Index: m.Index, Parent: m.Parent, GI: m.GI, CI: m.CI, UUID: m.UUID})
	}
}

// checkRequirements evaluates the requirements against the driver and
// every selected GPU (a selected MIG device's parent is among them). What
// only NVML knows (brand, compute capability) is unknown after procfs
// discovery, and a term on it fails, saying why, unless PlanOptions.NVML,
// asked then and only then, gives it; the CUDA version is then the
// driver's table answer (driver.Driver.CUDAInfo).
func (pl *planner) checkRequirements() error {
	reqs := pl.req.Requirements
	if pl.req.DisableRequire || len(reqs) == 0 {
		return nil
	}
	facts := requirement.Facts{DriverVersion: pl.p.Driver.Version, UnknownReason: pl.unknownReason()}
	facts.CUDAVersion, facts.CUDAAtLeast = pl.requireCUDA()
	for _, g := range pl.sel.GPUs {
		facts.Devices = append(facts.Devices, requirement.Device{Arch: g.ComputeCapability, Brand: g.Brand})
	}
	err := requirement.Check(reqs, facts)
	if errors.Is(err, requirement.ErrUnknownFact) && pl.opts.NVML != nil {
		facts = pl.askNVML(facts)
		err = requirement.Check(reqs, facts)
	}
	if err != nil {
		return stageErr(StageRequirement, err)
	}
	pl.p.Requirements = slices.Clone(reqs)
	return nil
}

// requireCUDA is the CUDA version requirements are checked against: the
// plan's (NVML's) or else the driver's table answer, which may be a lower
// bound; empty when neither is known.
func (pl *planner) requireCUDA() (string, bool) {
	if v := pl.p.Driver.CUDAVersion; v != "" {
		return v, false
	}
	c, err := pl.host.Driver.CUDAInfo()
	if err != nil {
		return "", false
	}
	return c.Version, c.AtLeast
}

// unknownReason says why facts only NVML reports may be missing.
func (pl *planner) unknownReason() string {
	switch e := pl.dev.NVMLError; {
	case pl.dev.Backend != devices.Procfs:
		return ""
	case e == "":
		return "devices were discovered without NVML (backend procfs)"
	case strings.HasPrefix(e, devices.ErrNVMLUnavailable.Error()):
		return e
	}
	return devices.ErrNVMLUnavailable.Error() + ": " + pl.dev.NVMLError
}

// planNodes lists the device nodes (bind mounts unless NoDevbind), their
// cgroup rules (unless NoCgroups) and the procfs binds that go with them:
// control nodes, the selected GPUs (with their DRM nodes and by-path links
// for graphics and display), MIG capabilities, IMEX channels.
func (pl *planner) planNodes() {
	pl.planControlNodes()
	for _, g := range pl.sel.GPUs {
		id := strconv.Itoa(g.Index)
		pl.node(g.Node, id)
		pl.procBind(g.ProcDir, true, id)
		pl.planDRM(g, id)
	}
	pl.planMIG()
	pl.planIMEX()
}

// planControlNodes follows nvc_driver_mount: nvidiactl always, nodes of
// another major (nvidia-uvm, nvidia-uvm-tools) with compute's libraries,
// nvidia-modeset with display; on WSL2, /dev/dxg always.
func (pl *planner) planControlNodes() {
	for _, n := range pl.dev.ControlNodes {
		if n.Major != devices.MajorNvidia && !isDXG(n) && !pl.exp.Has(capabilities.Compute) {
			continue
		}
		if n.Path == devices.DevNvidiaModeset && !pl.req.Capabilities.Has(capabilities.Display) {
			continue
		}
		pl.node(n, "")
	}
}

// node binds a device node (unless NoDevbind) and allows it (unless
// NoCgroups).
func (pl *planner) node(n devices.Node, id string) {
	if !pl.opts.NoDevbind && !pl.mount(Mount{Kind: MountDevice, Source: pl.dev.HostPath(n.Path), Target: n.Path,
		Device: &DeviceNumber{Major: n.Major, Minor: n.Minor}, For: id}) {
		pl.claim(pl.p.Mounts, n.Path, id)
	}
	pl.rule(n.Major, n.Minor)
}

// claim adds device id to the For of the mount at target in mounts, which
// another device already planned (two MIG devices of one GPU instance
// share its access node and capability file). A mount every device shares
// stays shared.
func (pl *planner) claim(mounts []Mount, target, id string) {
	i := slices.IndexFunc(mounts, func(m Mount) bool { return m.Target == target })
	if i < 0 || id == "" || mounts[i].For == "" || slices.Contains(mounts[i].devices(), id) {
		return
	}
	mounts[i].For += "," + id
}

// rule allows a character device, once.
func (pl *planner) rule(major, minor uint32) {
	num := DeviceNumber{Major: major, Minor: minor}
	if pl.opts.NoCgroups || pl.rules[num] {
		return
	}
	pl.rules[num] = true
	pl.p.CgroupRules = append(pl.p.CgroupRules, DeviceRule{Type: "c", Major: major, Minor: minor, Access: "rw"})
}

// procBind binds a /proc/driver/nvidia path read-only inside the procfs
// tmpfs (none on WSL).
func (pl *planner) procBind(p string, dir bool, id string) {
	if pl.proc < 0 {
		return
	}
	if pl.targets[p] {
		pl.claim(pl.p.Tmpfs[pl.proc].Mounts, p, id)
		return
	}
	pl.targets[p] = true
	t := &pl.p.Tmpfs[pl.proc]
	t.Mounts = append(t.Mounts, Mount{Kind: MountProc, Source: pl.dev.HostPath(p), Target: p,
		Options: kindOptions(MountProc), Dir: dir, For: id})
}

// planMIG grants MIG capabilities (as libnvidia-container does): the global
// config/monitor capabilities with "all", else each selected MIG device's
// GPU and compute instance access.
func (pl *planner) planMIG() {
	if pl.migConfig != nil && len(pl.migConfig.GPUs) > 0 {
		pl.planMIGGlobal(pl.dev.MIGConfig, pl.migConfig)
	}
	if pl.migMonitor != nil && len(pl.migMonitor.GPUs) > 0 {
		pl.planMIGGlobal(pl.dev.MIGMonitor, pl.migMonitor)
	}
	if isAll(pl.migConfig) || isAll(pl.migMonitor) {
		return
	}
	for _, m := range pl.sel.MIGDevices {
		id := fmt.Sprintf("%d:%d", m.Parent, m.Index)
		pl.migCap(m.GIAccess, id)
		pl.migCap(m.CIAccess, id)
	}
}

func isAll(s *devices.Selection) bool { return s != nil && s.All }

// planMIGGlobal binds the whole capabilities tree and, where capabilities
// are device nodes, the /dev/nvidia-caps directory, allowing the global
// capability and every MIG minor of the granted GPUs. The directory is
// bound even with NoDevbind, as libnvidia-container binds it: it is not a
// device node mount.
func (pl *planner) planMIGGlobal(c *devices.Cap, s *devices.Selection) {
	pl.procBind(devices.ProcCapabilities, true, "")
	if pl.dev.NVCapsStyle != devices.NVCapsDev {
		return
	}
	pl.mount(Mount{Kind: MountCapsDir, Source: pl.dev.HostPath(devices.DevNvidiaCaps), Target: devices.DevNvidiaCaps, Dir: true})
	if c != nil && c.Node != nil {
		pl.rule(c.Node.Major, c.Node.Minor)
	}
	for _, g := range s.GPUs {
		for _, minor := range g.MIGMinors {
			pl.rule(pl.dev.CapsMajor, minor)
		}
	}
}

// migCap binds one access capability file and, where capabilities are
// device nodes, its node.
func (pl *planner) migCap(c devices.Cap, id string) {
	pl.procBind(c.Proc, false, id)
	if pl.dev.NVCapsStyle != devices.NVCapsDev {
		return
	}
	if c.Node == nil {
		pl.warn("missing device node for MIG capability " + c.Proc)
		return
	}
	pl.node(*c.Node, id)
}

// planIMEX binds the requested IMEX channels; the channels without a
// node on the host are left out with one warning for them all (a request
// may name up to request.MaxIMEXChannels), which names the first few.
func (pl *planner) planIMEX() {
	var missing []uint32
	for _, id := range pl.req.IMEXChannels {
		ch, ok := pl.imexChannel(id)
		if !ok {
			missing = append(missing, id)
			continue
		}
		pl.node(ch.Node, "")
	}
	switch {
	case len(missing) == 1:
		pl.warn(fmt.Sprintf("missing IMEX channel node %s/channel%d", devices.DevIMEXChannels, missing[0]))
	case len(missing) > 1:
		pl.warn(summary(fmt.Sprintf("missing IMEX channel nodes in %s:", devices.DevIMEXChannels), "channel%d", missing))
	}
}

// summaryItems is how many items a summary warning names.
const summaryItems = 8

// summary is prefix, then the first summaryItems items formatted with
// format, then the count when there are more.
func summary(prefix, format string, items []uint32) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i, it := range items[:min(len(items), summaryItems)] {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " "+format, it)
	}
	if len(items) > summaryItems {
		fmt.Fprintf(&b, ", … (%d in all)", len(items))
	}
	return b.String()
}

func (pl *planner) imexChannel(id uint32) (devices.IMEXChannel, bool) {
	for _, ch := range pl.dev.IMEXChannels {
		if ch.ID == id {
			return ch, true
		}
	}
	return devices.IMEXChannel{}, false
}

func (pl *planner) warn(msg string) { pl.p.Warnings = append(pl.p.Warnings, msg) }

// devices lists the IDs in m.For; nil for a mount every device shares.
func (m Mount) devices() []string {
	if m.For == "" {
		return nil
	}
	return strings.Split(m.For, ",")
}
