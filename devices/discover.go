package devices

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-nvc/nvc/driver"
)

// Options change what Discover reads. A nil *Options means defaults.
type Options struct {
	// Backend chooses how GPUs are found. Empty: Auto.
	Backend Backend
	// NVML is the NVML library to use (NewNVMLFromGoNVML wraps a go-nvml
	// one in a cgo build). Nil: in a cgo build, libnvidia-ml.so.1 from the
	// driver root (see NVMLLibrary), loaded in-process with go-nvml's
	// nvml.New once it is known to export every function discovery calls;
	// in a build without cgo, none (ErrNVMLUnavailable, and Auto falls
	// back to Procfs).
	NVML NVMLInterface
	// NVMLLibrary is the path of libnvidia-ml.so.1 inside the driver root
	// (Roots.Driver), resolved there. Empty: with driver root "/" the
	// dynamic loader finds it by name; under another driver root it is
	// looked for in the usual library directories of that root
	// (/usr/lib/x86_64-linux-gnu, /usr/lib64, …). A library found in a
	// root is loaded through the descriptor it was opened with and must be
	// a regular file.
	NVMLLibrary string
	// Roots say where the driver (nvidia-container-cli --root), procfs and
	// /dev are; LDCache is not read. Zero: the running host, defaulted by
	// driver.Roots.WithDefaults as package driver defaults them (the dev
	// root is <driver root>/dev: libnvidia-container looks device nodes up
	// inside --root).
	Roots driver.Roots
	// WithNVML, when set, is called with the NVML discovery used, after
	// the GPUs are read and before NVML is shut down, so that a caller
	// asks it more in the same session: NVML is slow to start (hundreds
	// of milliseconds to seconds on a GPU without persistence mode).
	// nvcontainer.OpenHost opens the driver there, which asks NVML for the
	// driver and CUDA versions (this package reads neither: package
	// driver owns them). It is not called when discovery did not use
	// NVML; its error fails Discover. Nil: nothing more is asked.
	WithNVML func(NVMLInterface) error `json:"-"`
}

func (o *Options) withDefaults() Options {
	var d Options
	if o != nil {
		d = *o
	}
	if d.Backend == "" {
		d.Backend = Auto
	}
	d.Roots = d.Roots.WithDefaults()
	return d
}

// Discover returns the host's GPUs, MIG devices, control nodes and IMEX
// channels. On WSL2 (<dev root>/dxg exists) it reads neither procfs nor
// NVML: see the WSL backend. With NVML it calls Init and Shutdown itself;
// the device nodes, majors and capabilities always come from the proc and
// dev roots.
//
// ctx bounds the NVML part: NVML's calls cannot be interrupted, so when ctx
// is done first Discover stops waiting for them (they finish in the
// background) and treats NVML as unavailable: an error matching
// [ErrNVMLUnavailable] and ctx's error with the NVML backend, procfs with
// Auto.
func Discover(ctx context.Context, opts *Options) (*Host, error) {
	o := opts.withDefaults()
	h := &Host{Roots: o.Roots}
	if isWSL(h) {
		if err := discoverWSL(h); err != nil {
			return nil, err
		}
		return h, nil
	}
	f, err := readProcFacts(o.Roots.Proc)
	if err != nil {
		return nil, fmt.Errorf("discovering devices: %w", err)
	}
	if err := discoverGPUs(ctx, h, &o, f); err != nil {
		return nil, fmt.Errorf("discovering devices with %s: %w", h.Backend, err)
	}
	if err := fillHost(h, f); err != nil {
		return nil, fmt.Errorf("discovering devices: %w", err)
	}
	return h, nil
}

func discoverGPUs(ctx context.Context, h *Host, o *Options, f *procFacts) error {
	switch o.Backend {
	case Procfs:
		h.Backend = Procfs
		return discoverProcfs(h, f)
	case NVML:
		h.Backend = NVML
		return discoverNVMLContext(ctx, h, o, f)
	case Auto:
		h.Backend = NVML
		err := discoverNVMLContext(ctx, h, o, f)
		if !errors.Is(err, ErrNVMLUnavailable) {
			return err
		}
		h.Backend, h.NVMLError = Procfs, err.Error()
		return discoverProcfs(h, f)
	}
	h.Backend = Auto
	return fmt.Errorf("%w: backend %q", ErrInvalid, o.Backend)
}

// discoverNVMLContext is discoverWithNVML on a copy of h, given up when
// ctx is done first; h is changed only when NVML answered in time.
func discoverNVMLContext(ctx context.Context, h *Host, o *Options, f *procFacts) error {
	if ctx.Done() == nil {
		return discoverWithNVML(h, o, f)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrNVMLUnavailable, context.Cause(ctx))
	}
	tmp := *h
	done := make(chan error, 1)
	go func() { done <- discoverWithNVML(&tmp, o, f) }()
	select {
	case err := <-done:
		*h = tmp
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for NVML: %w", ErrNVMLUnavailable, context.Cause(ctx))
	}
}

func discoverWithNVML(h *Host, o *Options, f *procFacts) error {
	if o.NVML != nil {
		return discoverNVML(h, o.NVML, f, o.WithNVML)
	}
	lib, err := openNVML(o)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNVMLUnavailable, err)
	}
	defer lib.close()
	return discoverNVML(h, lib.api, f, o.WithNVML)
}

// procFacts are the driver facts both backends take from procfs.
type procFacts struct {
	root      string
	majors    map[string]uint32 // character device majors
	migMinors *minorTable       // mig-minors; nil when absent
	hasCaps   bool              // /proc/driver/nvidia/capabilities exists
}

func readProcFacts(root string) (*procFacts, error) {
	f := &procFacts{root: root}
	data, err := os.ReadFile(filepath.Join(root, "devices"))
	if err != nil {
		return nil, err
	}
	if f.majors, err = parseCharMajors(data); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(root, "devices"), err)
	}
	mm := filepath.Join(root, "driver/nvidia-caps/mig-minors")
	if file, e := os.Open(mm); e == nil {
		f.migMinors, err = readMIGMinors(file)
		file.Close()
	} else {
		err = e
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", mm, err)
	}
	_, err = os.Stat(filepath.Join(root, "driver/nvidia/capabilities"))
	f.hasCaps = err == nil
	return f, nil
}

// path maps a /proc path to the proc root.
func (f *procFacts) path(p string) string {
	return filepath.Join(f.root, p[len("/proc"):])
}
