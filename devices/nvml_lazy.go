package devices

import (
	"os"
	"sync"
)

// NewLazyNVML returns an NVMLInterface that loads libnvidia-ml.so.1 as
// Discover would with o (from o.Roots.Driver, or o.NVMLLibrary) only when its
// Init is first called, so a caller can hand NVML on to a step that may
// never need it (nvcontainer.PlanOptions.NVML) without paying NVML's
// start-up: loading the library is cheap, nvmlInit is not (hundreds of
// milliseconds to seconds on a GPU without persistence mode). The library
// stays loaded once loaded; a failed load is returned by every Init.
//
// In a build without cgo there is no NVML to load: NewLazyNVML returns nil.
func NewLazyNVML(o *Options) NVMLInterface {
	if !canLoadNVML {
		return nil
	}
	d := o.withDefaults()
	return &lazyNVML{opts: d}
}

// lazyNVML is NewLazyNVML's NVMLInterface: every call but Init goes to
// the library Init loaded.
type lazyNVML struct {
	opts Options
	once sync.Once
	lib  *loadedNVML
	err  error
	NVMLInterface
}

func (l *lazyNVML) Init() error {
	l.once.Do(func() {
		if l.lib, l.err = openNVML(&l.opts); l.err == nil {
			l.NVMLInterface = l.lib.api
		}
	})
	if l.err != nil {
		return l.err
	}
	return l.NVMLInterface.Init()
}

func (l *lazyNVML) Shutdown() error {
	if l.NVMLInterface == nil {
		return l.err
	}
	return l.NVMLInterface.Shutdown()
}

// CanLoadNVML says whether this build loads libnvidia-ml.so.1 in-process:
// a cgo build does; a build without cgo gets NVML from an injected
// NVMLInterface or from a helper process (NewNVMLHelper).
func CanLoadNVML() bool { return canLoadNVML }

// LoadNVML loads libnvidia-ml.so.1 in-process, now, as Discover would
// with o (from o.Roots.Driver, or o.NVMLLibrary), or, when lib is not nil,
// the library open at lib (LoadNVML then owns lib): the NVML helper
// process (examples/nvc-nvml) is handed the library its caller found.
// The library is checked to export every function discovery calls; Init
// is not called. unload closes it. A build without cgo fails (see
// CanLoadNVML).
func LoadNVML(o *Options, lib *os.File) (api NVMLInterface, unload func(), err error) {
	var l *loadedNVML
	if lib != nil {
		l, err = loadNVMLFile(lib)
	} else {
		d := o.withDefaults()
		l, err = openNVML(&d)
	}
	if err != nil {
		return nil, nil, err
	}
	return l.api, l.close, nil
}
