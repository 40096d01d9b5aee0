package driver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/ldcache"
)

func open(t *testing.T, o driver.Options) *driver.Driver {
	t.Helper()
	d, err := driver.Open(&o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestVersionSources is acceptance test 2: the version is found with NVML,
// without NVML (procfs), and without procfs (the libcuda file name), on
// hosts of two versions whose caches also lead to the other version's
// libcuda (a leftover listed after the driver's).
func TestVersionSources(t *testing.T) {
	for _, o := range hosts {
		h, err := fakehost.Generate(t.TempDir(), &o)
		if err != nil {
			t.Fatal(err)
		}
		noProc := t.TempDir()
		for _, tc := range []struct {
			name   string
			opts   driver.Options
			source driver.VersionSource
			cuda   string
		}{
			{"nvml", driver.Options{NVML: h.NVML, ProcRoot: h.ProcRoot}, driver.FromNVML, h.CUDAVersion},
			{"procfs", driver.Options{ProcRoot: h.ProcRoot}, driver.FromProcfs, ""},
			{"library", driver.Options{ProcRoot: noProc}, driver.FromLibrary, ""},
		} {
			tc.opts.Root, tc.opts.DevRoot = h.Root, h.DevRoot
			d := open(t, tc.opts)
			want := driver.Version{NVRM: h.DriverVersion, Source: tc.source, CUDA: tc.cuda}
			if got := d.Version(); got != want {
				t.Errorf("%s %s: version %+v, want %+v", h.DriverVersion, tc.name, got, want)
			}
			cuda, err := d.CUDAVersion()
			if tc.cuda != "" && (cuda != tc.cuda || err != nil) {
				t.Errorf("%s %s: CUDAVersion %q, %v", h.DriverVersion, tc.name, cuda, err)
			}
			if tc.cuda == "" && (!errors.Is(err, driver.ErrUnknownCUDAVersion) || !strings.Contains(err.Error(), "no NVML")) {
				t.Errorf("%s %s: CUDAVersion %q, %v; want ErrUnknownCUDAVersion naming the missing NVML", h.DriverVersion, tc.name, cuda, err)
			}
			fs, err := d.Files(capabilities.Of(capabilities.Compute))
			if err != nil || len(fs.Libraries) != 12 {
				t.Errorf("%s %s: %d compute libraries, %v", h.DriverVersion, tc.name, len(fs.Libraries), err)
			}
		}
	}
}

// TestVersionNVMLFirst: NVML wins over procfs, and a failing NVML falls
// back to procfs with the failure kept as the reason the CUDA version is
// unknown.
func TestVersionNVMLFirst(t *testing.T) {
	h, err := fakehost.Generate(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := &versionNVML{driver: "560.35.03", cuda: 12060}
	d := open(t, driver.Options{Root: h.Root, ProcRoot: h.ProcRoot, DevRoot: h.DevRoot, NVML: n})
	if v := d.Version(); v != (driver.Version{NVRM: "560.35.03", Source: driver.FromNVML, CUDA: "12.6"}) {
		t.Errorf("version %+v", v)
	}
	if n.inits != 1 || n.shutdowns != 1 {
		t.Errorf("NVML Init called %d times, Shutdown %d", n.inits, n.shutdowns)
	}
	failing := &versionNVML{initErr: errors.New("ERROR_LIBRARY_NOT_FOUND")}
	d = open(t, driver.Options{Root: h.Root, ProcRoot: h.ProcRoot, DevRoot: h.DevRoot, NVML: failing})
	if v := d.Version(); v != (driver.Version{NVRM: h.DriverVersion, Source: driver.FromProcfs}) {
		t.Errorf("version with failing NVML %+v", v)
	}
	if _, err := d.CUDAVersion(); !errors.Is(err, driver.ErrUnknownCUDAVersion) || !strings.Contains(err.Error(), "initializing NVML") {
		t.Errorf("CUDAVersion with failing NVML: %v", err)
	}
}

// versionNVML is a driver.NVMLVersions that counts its Init and Shutdown
// calls and can fail Init.
type versionNVML struct {
	driver           string
	cuda             int
	initErr          error
	inits, shutdowns int
}

func (n *versionNVML) Init() error                           { n.inits++; return n.initErr }
func (n *versionNVML) Shutdown() error                       { n.shutdowns++; return nil }
func (n *versionNVML) SystemDriverVersion() (string, error)  { return n.driver, nil }
func (n *versionNVML) SystemCUDADriverVersion() (int, error) { return n.cuda, nil }

// TestVersionNotFound: no NVML, no procfs file, no libcuda in the cache.
func TestVersionNotFound(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ldcache.WriteFile(filepath.Join(root, "etc/ld.so.cache"), &ldcache.Cache{}); err != nil {
		t.Fatal(err)
	}
	_, err := driver.Open(&driver.Options{Root: root, ProcRoot: t.TempDir(), DevRoot: t.TempDir()})
	if !errors.Is(err, driver.ErrNoVersion) || !strings.Contains(err.Error(), "driver/nvidia/version") {
		t.Errorf("Open: %v, want ErrNoVersion naming what was tried", err)
	}
}

func TestOpenErrors(t *testing.T) {
	root := t.TempDir()
	_, err := driver.Open(&driver.Options{Root: root})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "/etc/ld.so.cache") {
		t.Errorf("Open without a cache: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "cache"), []byte("not a cache at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = driver.Open(&driver.Options{Root: root, LDCache: "/cache"})
	if !errors.Is(err, ldcache.ErrNotCache) {
		t.Errorf("Open with a bad cache: %v", err)
	}
	_, err = driver.Open(&driver.Options{Root: root, GOARCH: "wasm"})
	if !errors.Is(err, driver.ErrNotSupported) {
		t.Errorf("Open for wasm: %v", err)
	}
}
