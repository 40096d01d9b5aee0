package driver_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/ldcache"
)

func open(t *testing.T, o driver.Options) *driver.Driver {
	t.Helper()
	d, err := driver.Open(&o)
	require.NoError(t, err)
	return d
}

// TestVersionSources is acceptance test 2: the version is found with NVML,
// without NVML (procfs), and without procfs (the libcuda file name), on
// hosts of two versions whose caches also lead to the other version's
// libcuda (a leftover listed after the driver's).
func TestVersionSources(t *testing.T) {
	for _, o := range hosts {
		h, err := fakehost.Generate(t.TempDir(), &o)
		require.NoError(t, err)
		noProc := t.TempDir()
		for _, tc := range []struct {
			name   string
			opts   driver.Options
			source driver.VersionSource
			cuda   string
		}{
			{"nvml", driver.Options{NVML: h.NVML, Roots: driver.Roots{Proc: h.ProcRoot}}, driver.FromNVML, h.CUDAVersion},
			{"procfs", driver.Options{Roots: driver.Roots{Proc: h.ProcRoot}}, driver.FromProcfs, ""},
			{"library", driver.Options{Roots: driver.Roots{Proc: noProc}}, driver.FromLibrary, ""},
		} {
			tc.opts.Roots.Driver, tc.opts.Roots.Dev = h.Root, h.DevRoot
			d := open(t, tc.opts)
			want := driver.Version{NVRM: h.DriverVersion, Source: tc.source, CUDA: tc.cuda}
			assert.Equal(t, want, d.Version(), "%s %s: version", h.DriverVersion, tc.name)
			cuda, err := d.CUDAVersion()
			if tc.cuda != "" {
				assert.NoError(t, err, "%s %s: CUDAVersion", h.DriverVersion, tc.name)
				assert.Equal(t, tc.cuda, cuda, "%s %s: CUDAVersion", h.DriverVersion, tc.name)
			} else if assert.ErrorIs(t, err, driver.ErrUnknownCUDAVersion, "%s %s: CUDAVersion %q", h.DriverVersion, tc.name, cuda) {
				assert.ErrorContains(t, err, "no NVML", "%s %s: CUDAVersion; want the missing NVML named", h.DriverVersion, tc.name)
			}
			fs, err := d.Files(capabilities.Of(capabilities.Compute))
			if assert.NoError(t, err, "%s %s: compute libraries", h.DriverVersion, tc.name) {
				assert.Len(t, fs.Libraries, 12, "%s %s: compute libraries", h.DriverVersion, tc.name)
			}
		}
	}
}

// TestVersionNVMLFirst: NVML wins over procfs, and a failing NVML falls
// back to procfs with the failure kept as the reason the CUDA version is
// unknown.
func TestVersionNVMLFirst(t *testing.T) {
	h, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	n := &versionNVML{driver: "560.35.03", cuda: 12060}
	d := open(t, driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}, NVML: n})
	assert.Equal(t, driver.Version{NVRM: "560.35.03", Source: driver.FromNVML, CUDA: "12.6"}, d.Version(), "version")
	assert.Equal(t, 1, n.inits, "NVML Init calls")
	assert.Equal(t, 1, n.shutdowns, "NVML Shutdown calls")
	failing := &versionNVML{initErr: errors.New("ERROR_LIBRARY_NOT_FOUND")}
	d = open(t, driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}, NVML: failing})
	assert.Equal(t, driver.Version{NVRM: h.DriverVersion, Source: driver.FromProcfs}, d.Version(), "version with failing NVML")
	_, err = d.CUDAVersion()
	if assert.ErrorIs(t, err, driver.ErrUnknownCUDAVersion, "CUDAVersion with failing NVML") {
		assert.ErrorContains(t, err, "initializing NVML", "CUDAVersion with failing NVML")
	}
}

// TestNVMLCUDAVersion: NVML gives the CUDA driver version as
// major*1000 + minor*10, so a two-digit minor is read whole (12.10, not
// 12.0). Package driver is the one reader of it (it moved here from
// package devices, which no longer reads versions).
func TestNVMLCUDAVersion(t *testing.T) {
	h, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	for v, want := range map[int]string{12040: "12.4", 12100: "12.10", 13000: "13.0"} {
		t.Run(want, func(t *testing.T) {
			n := &versionNVML{driver: "580.65.06", cuda: v}
			d := open(t, driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot}, NVML: n})
			assert.Equal(t, want, d.Version().CUDA, "NVML CUDA version %d", v)
			assert.Equal(t, want, driver.CUDAVersionFromNVML(v), "CUDAVersionFromNVML(%d)", v)
		})
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
	require.NoError(t, os.Mkdir(filepath.Join(root, "etc"), 0o755))
	require.NoError(t, ldcache.WriteFile(filepath.Join(root, "etc/ld.so.cache"), &ldcache.Cache{}))
	_, err := driver.Open(&driver.Options{Roots: driver.Roots{Driver: root, Proc: t.TempDir(), Dev: t.TempDir()}})
	if assert.ErrorIs(t, err, driver.ErrNoVersion, "Open") {
		assert.ErrorContains(t, err, "driver/nvidia/version", "Open: want ErrNoVersion naming what was tried")
	}
}

func TestOpenErrors(t *testing.T) {
	root := t.TempDir()
	// Without a cache the standard dirs are scanned (TestOpenWithoutLDCache),
	// and an empty root has no driver there.
	_, err := driver.Open(&driver.Options{Roots: driver.Roots{Driver: root, Proc: t.TempDir(), Dev: t.TempDir()}})
	assert.ErrorIs(t, err, driver.ErrNoVersion, "Open without a cache, on an empty root")
	require.NoError(t, os.WriteFile(filepath.Join(root, "cache"), []byte("not a cache at all"), 0o644))
	_, err = driver.Open(&driver.Options{Roots: driver.Roots{Driver: root, LDCache: "/cache"}})
	assert.ErrorIs(t, err, ldcache.ErrNotCache, "Open with a bad cache")
	_, err = driver.Open(&driver.Options{Roots: driver.Roots{Driver: root}, GOARCH: "wasm"})
	assert.ErrorIs(t, err, driver.ErrNotSupported, "Open for wasm")
}
