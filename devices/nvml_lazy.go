package devices

import "sync"

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
