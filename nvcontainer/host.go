package nvcontainer

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
)

// OpenHost opens the host driver and discovers the devices from the same
// roots, as nvidia-container-cli does before every command: d says where
// the driver, procfs and /dev are (nil: the running host), and backend how
// GPUs are found (empty: devices.Auto, which loads libnvidia-ml.so.1 from
// the driver root and falls back to procfs). When d.NVML is set, both the
// driver and the devices are asked through it, so it must be a
// devices.NVMLInterface (devices.ErrInvalid otherwise).
//
// The driver alone reads the driver and CUDA versions. When discovery uses
// NVML, the driver is opened inside that NVML session
// (devices.Options.WithNVML), so NVML starts once and gives both versions;
// otherwise the driver is opened without NVML unless d.NVML is set, so a
// host without a working NVML still gives the driver version (from
// procfs). ctx bounds the wait for NVML (see devices.Discover).
func OpenHost(ctx context.Context, d *driver.Options, backend devices.Backend) (*Host, error) {
	if d == nil {
		d = &driver.Options{}
	}
	nv, ok := d.NVML.(devices.NVMLInterface)
	if d.NVML != nil && !ok {
		return nil, fmt.Errorf("%w: driver.Options.NVML (%T) is not a devices.NVMLInterface", devices.ErrInvalid, d.NVML)
	}
	var inNVML openedDriver
	devs, err := devices.Discover(ctx, &devices.Options{Backend: backend, NVML: nv, Roots: d.Roots, WithNVML: inNVML.open(d)})
	if err != nil {
		return nil, err
	}
	var drv *driver.Driver
	if devs.Backend == devices.NVML {
		drv, err = inNVML.get()
	} else {
		drv, err = driver.Open(d)
	}
	if err != nil {
		return nil, err
	}
	return &Host{Driver: drv, Devices: devs}, nil
}

// openedDriver is the driver OpenHost opened inside discovery's NVML
// session. Discover may give up waiting for NVML and leave the session
// running in the background, so the result is guarded.
type openedDriver struct {
	mu  sync.Mutex
	drv *driver.Driver
	err error
}

// open returns the devices.Options.WithNVML that opens the driver with d
// and the session's NVML. The driver's error is OpenHost's, not
// discovery's.
func (o *openedDriver) open(d *driver.Options) func(devices.NVMLInterface) error {
	return func(n devices.NVMLInterface) error {
		opts := *d
		opts.NVML = inSession{n}
		drv, err := driver.Open(&opts)
		o.mu.Lock()
		defer o.mu.Unlock()
		o.drv, o.err = drv, err
		return nil
	}
}

// inSession is an NVML whose session discovery holds open: the driver's
// Init and Shutdown do nothing, so nvmlInit runs once.
type inSession struct{ devices.NVMLInterface }

func (inSession) Init() error     { return nil }
func (inSession) Shutdown() error { return nil }

func (o *openedDriver) get() (*driver.Driver, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.drv, o.err
}

// HostOptions say how [PrepareHost] opens a host. A nil *HostOptions
// means the running host, found as [OpenHost] finds it by default.
type HostOptions struct {
	// Driver says where the driver, procfs and /dev are, as for
	// [OpenHost]. Nil: the running host.
	Driver *driver.Options
	// Backend is how GPUs are found. Empty: devices.Auto.
	Backend devices.Backend
	// LoadModules loads the NVIDIA kernel modules (modprobe chrooted into
	// the driver root when it is not /) and creates missing device nodes
	// under the dev root (Driver.Roots) first, as
	// nvidia-container-cli --load-kmods does (devices.CreateNodes; needs
	// root). False: nothing on the host is changed.
	LoadModules bool
	// IMEXChannels are the IMEX channel nodes LoadModules also creates.
	// Nil: none.
	IMEXChannels []uint32
	// NVML, when set, is the NVML to use when one is needed, in place of
	// the driver root's libnvidia-ml.so.1 loaded in-process: a build
	// without cgo sets devices.NewNVMLHelper's client. PrepareHost asks
	// it as Driver.NVML; PrepareHostFor hands it on as Host.NVML and asks
	// it only for a MIG device named by UUID. Its Init must cost nothing
	// until called (it runs NVML's start-up). Nil: in-process NVML (a cgo
	// build), or none. Driver.NVML, when set, wins; with Backend Procfs
	// it is not used.
	NVML devices.NVMLInterface
}

// withNVML is d with o.NVML as its NVML when it has none and backend
// may use NVML (with Procfs, the driver is opened without NVML, as a cgo
// build opens it).
func (o *HostOptions) withNVML(d *driver.Options, backend devices.Backend) *driver.Options {
	if o.NVML == nil || d.NVML != nil || backend == devices.Procfs {
		return d
	}
	c := *d
	c.NVML = o.NVML
	return &c
}
