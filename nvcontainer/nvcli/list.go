package nvcli

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
)

// ListOptions are the options of nvidia-container-cli list. The driver
// options (--no-persistenced, --no-fabricmanager, --no-gsp-firmware) are
// driver.Options, given when the host is opened.
type ListOptions struct {
	// Devices are the --device values (each a comma list). Nil: no
	// --device, and no device node is listed; non-nil, even empty: the
	// control nodes, then the selected GPUs and MIG devices.
	Devices []string
	// MIGConfig and MIGMonitor are the --mig-config and --mig-monitor
	// values; only "all" is accepted. Nil: none.
	MIGConfig, MIGMonitor []string
	// IMEXChannels are the --imex-channel channels; each is listed as its
	// node path whether or not the host has it. Nil: none.
	IMEXChannels []uint32
	// Binaries, Libraries, IPCs and Firmware list those driver files;
	// Compat32 adds the 32-bit libraries after the native ones.
	Binaries, Libraries, IPCs, Firmware, Compat32 bool
}

// DefaultListOptions are what a bare `nvidia-container-cli list` lists:
// --device=all --compat32 -l -b -i -f.
func DefaultListOptions() *ListOptions {
	return &ListOptions{Devices: []string{"all"}, Binaries: true, Libraries: true,
		IPCs: true, Firmware: true, Compat32: true}
}

// List returns the paths nvidia-container-cli list prints for opts (nil:
// DefaultListOptions), one per line, in its order: the control nodes and
// the selected GPUs' nodes and MIG access capabilities (with --device), the
// IMEX channel nodes, the MIG config and monitor capabilities ("all"),
// then binaries, libraries, 32-bit libraries, IPCs and firmware. The
// libraries are those of libnvidia-container's lists: not the EGL
// platform libraries package driver adds for graphics (CDI and the
// toolkit mount them; nvidia-container-cli never lists them).
//
// Device nodes and procfs files are host paths as seen from the host's /
// (map them with devices.Host.HostPath), binaries, libraries and IPCs are
// resolved paths inside the driver root, and firmware keeps the path the
// kernel searches. Errors are *nvcontainer.PlanError values of stage device,
// mig-config or mig-monitor, printed as nvidia-container-cli prints them,
// or a detection error when the driver root cannot be read.
func List(host *nvcontainer.Host, opts *ListOptions) ([]string, error) {
	if host == nil || host.Driver == nil || host.Devices == nil {
		return nil, stageErr(nvcontainer.StageInput, fmt.Errorf("listing needs a host with a driver and devices"))
	}
	if opts == nil {
		opts = DefaultListOptions()
	}
	l := lister{dev: host.Devices, opts: opts}
	if err := l.selectDevices(); err != nil {
		return nil, err
	}
	l.listDevices()
	if err := l.listFiles(host.Driver); err != nil {
		return nil, err
	}
	return l.out, nil
}

// lister holds one List call.
type lister struct {
	dev                        *devices.Host
	opts                       *ListOptions
	sel, migConfig, migMonitor *devices.Selection
	out                        []string
}

func (l *lister) add(p ...string) { l.out = append(l.out, p...) }

func (l *lister) selectDevices() error {
	var err error
	l.sel = &devices.Selection{}
	if l.opts.Devices != nil {
		if l.sel, err = l.dev.Select(strings.Join(l.opts.Devices, ",")); err != nil {
			return stageErr(nvcontainer.StageDevice, err)
		}
	}
	if l.migConfig, err = l.selectMIG(l.opts.MIGConfig, l.dev.SelectMIGConfig); err != nil {
		return stageErr(nvcontainer.StageMIGConfig, err)
	}
	if l.migMonitor, err = l.selectMIG(l.opts.MIGMonitor, l.dev.SelectMIGMonitor); err != nil {
		return stageErr(nvcontainer.StageMIGMonitor, err)
	}
	return nil
}

func (l *lister) selectMIG(ids []string, sel func(string, *devices.Selection) (*devices.Selection, error)) (*devices.Selection, error) {
	if ids == nil {
		return &devices.Selection{}, nil
	}
	return sel(strings.Join(ids, ","), l.sel)
}

// listDevices prints the nodes and capabilities in list.c's order.
func (l *lister) listDevices() {
	if l.opts.Devices != nil {
		for _, n := range l.dev.ControlNodes {
			l.add(n.Path)
		}
		for _, g := range l.sel.GPUs {
			l.add(g.Node.Path)
		}
		if !l.migConfig.All && !l.migMonitor.All {
			l.listMIGAccess()
		}
	}
	for _, ch := range l.opts.IMEXChannels {
		l.add(fmt.Sprintf("%s/channel%d", devices.DevIMEXChannels, ch))
	}
	l.listMIGGlobal(l.migConfig, l.dev.MIGConfig)
	l.listMIGGlobal(l.migMonitor, l.dev.MIGMonitor)
}

// listMIGAccess prints each selected MIG device's GPU and compute instance
// access files, then, where capabilities are device nodes, their nodes.
func (l *lister) listMIGAccess() {
	for _, m := range l.sel.MIGDevices {
		l.add(m.GIAccess.Proc, m.CIAccess.Proc)
		if l.dev.NVCapsStyle == devices.NVCapsDev {
			l.addCapNode(m.GIAccess)
			l.addCapNode(m.CIAccess)
		}
	}
}

func (l *lister) addCapNode(c devices.Cap) {
	if c.Node != nil {
		l.add(c.Node.Path)
	}
}

// listMIGGlobal prints the global MIG capability and, per granted GPU,
// its capabilities dir and (device-node style) every MIG minor's node.
// The dir is libnvidia-container's mig_caps_path,
// /proc/driver/nvidia/capabilities/gpuN: the parent of the GPU's
// MIGCapsDir (.../gpuN/mig).
func (l *lister) listMIGGlobal(s *devices.Selection, global *devices.Cap) {
	if !s.All || len(s.GPUs) == 0 || global == nil {
		return
	}
	dev := l.dev.NVCapsStyle == devices.NVCapsDev
	l.add(global.Proc)
	if dev {
		l.addCapNode(*global)
	}
	for _, g := range s.GPUs {
		l.add(path.Dir(g.MIGCapsDir))
		if !dev {
			continue
		}
		l.add(devices.DevNvidiaCaps)
		for _, minor := range g.MIGMinors {
			l.add(path.Join(devices.DevNvidiaCaps, fmt.Sprintf("nvidia-cap%d", minor)))
		}
	}
}

// listFiles prints the driver's files; list looks them up for every
// capability class, as nvc_driver_info_new does.
func (l *lister) listFiles(d *driver.Driver) error {
	if !l.opts.Binaries && !l.opts.Libraries && !l.opts.IPCs && !l.opts.Firmware {
		return nil
	}
	files, err := d.Files(capabilities.All)
	if err != nil {
		return stageErr(nvcontainer.StageDetection, err)
	}
	sections := []struct {
		on    bool
		files []driver.File
	}{
		{l.opts.Binaries, files.Binaries},
		{l.opts.Libraries, files.Libraries},
		{l.opts.Libraries && l.opts.Compat32, files.Libraries32},
		{l.opts.IPCs, files.IPCs},
		{l.opts.Firmware, files.Firmware},
	}
	for _, s := range sections {
		for _, f := range s.files {
			if s.on && !isEGLPlatformLibrary(f) {
				l.add(f.Path)
			}
		}
	}
	return nil
}

// isEGLPlatformLibrary tells the EGL external platform libraries
// (libnvidia-egl-gbm, -wayland, -wayland2, -xcb, -xlib) package driver
// adds with graphics, as the NVIDIA Container Toolkit does: they are
// not on libnvidia-container's lists, so nvidia-container-cli list never
// prints them. (libnvidia-eglcore is on them.)
func isEGLPlatformLibrary(f driver.File) bool {
	return f.Kind == driver.Library && strings.HasPrefix(f.Name, "libnvidia-egl-")
}

func stageErr(stage nvcontainer.Stage, err error) error {
	return &nvcontainer.PlanError{Stage: stage, Err: err}
}
