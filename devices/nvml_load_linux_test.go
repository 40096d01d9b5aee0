//go:build cgo

package devices_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakenvmllib"
)

// buildFakeNVML compiles the fake NVML (internal/fakenvmllib) into path
// with the given driver version, marker file and extra defines.
func buildFakeNVML(t *testing.T, path, version, mark string, defines ...string) {
	t.Helper()
	fakenvmllib.Build(t, path, fakenvmllib.Options{Version: version, Mark: mark, Defines: defines})
}

// childResult is what TestDiscoverChild prints.
type childResult struct {
	Err  string        `json:"err,omitempty"`
	Host *devices.Host `json:"host,omitempty"`
	// NVRM and CUDA are what the loaded library says, asked in
	// discovery's session (Options.WithNVML) as package driver asks.
	NVRM string `json:"nvrm,omitempty"`
	CUDA string `json:"cuda,omitempty"`
}

// TestDiscoverChild is run by the NVML loading tests in a child process,
// because a library that lacks a function go-nvml calls aborts the whole
// process. It does nothing on its own.
func TestDiscoverChild(t *testing.T) {
	env := os.Getenv("NVC_DISCOVER_CHILD")
	if env == "" {
		return
	}
	var o devices.Options
	require.NoError(t, json.Unmarshal([]byte(env), &o))
	var r childResult
	o.WithNVML = func(n devices.NVMLInterface) error {
		d, err := driver.Open(&driver.Options{Roots: o.Roots, NVML: n})
		if err == nil {
			r.NVRM, r.CUDA = d.Version().NVRM, d.Version().CUDA
		}
		return nil
	}
	h, err := devices.Discover(context.Background(), &o)
	r.Host = h
	if err != nil {
		r.Err = err.Error()
	}
	out, _ := json.Marshal(r)
	fmt.Printf("RESULT %s\n", out)
}

// discoverInChild runs Discover with o in a child process; the child must
// exit normally within 30 s.
func discoverInChild(t *testing.T, o devices.Options) childResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, err := json.Marshal(o)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDiscoverChild$")
	cmd.Env = append(os.Environ(), "NVC_DISCOVER_CHILD="+string(opts))
	out, err := cmd.CombinedOutput()
	_, res, ok := strings.Cut(string(out), "RESULT ")
	require.NoError(t, err, "Discover in a child process (context: %v)\n%s", ctx.Err(), out)
	require.True(t, ok, "Discover in a child process: no RESULT\n%s", out)
	var r childResult
	res, _, _ = strings.Cut(res, "\n")
	require.NoError(t, json.Unmarshal([]byte(res), &r))
	return r
}

// rootOptions discovers on h with NVML loaded from the driver root.
func rootOptions(t *testing.T, b devices.Backend) (devices.Options, string) {
	h := genHost(t, nil)
	lib := filepath.Join(h.Root, "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1")
	require.NoError(t, os.Remove(lib))
	return devices.Options{Backend: b, Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}}, lib
}

// TestNVMLPartialLibrary: a libnvidia-ml.so.1 that exports nvmlInit_v2 and
// nothing else is refused before Init (Auto falls back to procfs and says
// which function is missing); go-nvml would abort the process at the first
// call into a missing function.
func TestNVMLPartialLibrary(t *testing.T) {
	o, lib := rootOptions(t, devices.Auto)
	mark := filepath.Join(t.TempDir(), "loaded")
	buildFakeNVML(t, lib, "550.54.15", mark, "PARTIAL")
	r := discoverInChild(t, o)
	if assert.Empty(t, r.Err, "auto") {
		assert.Equal(t, devices.Procfs, r.Host.Backend, "auto: %+v", r.Host)
		assert.Contains(t, r.Host.NVMLError, "nvmlShutdown not found", "auto")
	}
	o.Backend = devices.NVML
	r = discoverInChild(t, o)
	assert.Contains(t, r.Err, "NVML unavailable", "forced NVML")
}

// TestNVMLOldDriver: a library without the architecture and MIG functions
// (drivers before R450) is still used; discovery sees them as
// ERROR_FUNCTION_NOT_FOUND, as libnvidia-container does.
func TestNVMLOldDriver(t *testing.T) {
	o, lib := rootOptions(t, devices.NVML)
	buildFakeNVML(t, lib, "418.226.00", filepath.Join(t.TempDir(), "loaded"), "NO_MIG")
	r := discoverInChild(t, o)
	require.Empty(t, r.Err)
	require.Equal(t, "418.226.00", r.NVRM, "%+v", r)
	require.Equal(t, "12.4", r.CUDA, "%+v", r)
	require.Len(t, r.Host.GPUs, 1, "%+v", r.Host)
	g := r.Host.GPUs[0]
	assert.Equal(t, "GPU-fake", g.UUID, "GPU %+v", g)
	assert.Equal(t, "00000000:07:00.0", g.BusID, "GPU %+v", g)
	assert.Equal(t, "Tesla", g.Brand, "GPU %+v", g)
	assert.Equal(t, "8.0", g.ComputeCapability, "GPU %+v", g)
	assert.Empty(t, g.Architecture, "GPU %+v", g)
	assert.False(t, g.MIGCapable, "GPU %+v", g)
}

// TestNVMLResolvedInRoot: the driver root's libnvidia-ml.so.1 is an
// absolute symlink. It must be followed inside the root (to the root's
// copy, driver 550.54.15), never to the host file of the same path
// (driver 111.11.11), which must not even be loaded.
func TestNVMLResolvedInRoot(t *testing.T) {
	o, lib := rootOptions(t, devices.NVML)
	mark := filepath.Join(t.TempDir(), "loaded")
	host := filepath.Join(t.TempDir(), "outside", "libnvidia-ml.so.1")
	buildFakeNVML(t, host, "111.11.11", mark)
	buildFakeNVML(t, filepath.Join(o.Roots.Driver, host), "550.54.15", mark)
	require.NoError(t, os.Symlink(host, lib))
	r := discoverInChild(t, o)
	if assert.Empty(t, r.Err) {
		assert.Equal(t, "550.54.15", r.NVRM, "%+v", r)
		if assert.NotEmpty(t, r.Host.GPUs, "%+v", r.Host) {
			assert.Equal(t, "Ampere", r.Host.GPUs[0].Architecture, "%+v", r.Host)
		}
	}
	loaded, _ := os.ReadFile(mark)
	assert.Equal(t, "550.54.15\n", string(loaded), "libraries loaded")
}

// TestNVMLNotRegular: a FIFO in the library's place is refused, not opened
// (opening it would block until a writer appears).
func TestNVMLNotRegular(t *testing.T) {
	o, lib := rootOptions(t, devices.Auto)
	require.NoError(t, syscall.Mkfifo(lib, 0o644))
	r := discoverInChild(t, o)
	if assert.Empty(t, r.Err) {
		assert.Equal(t, devices.Procfs, r.Host.Backend, "%+v", r.Host)
		assert.Contains(t, r.Host.NVMLError, "not a regular file")
	}
}

// TestLazyNVML: NewLazyNVML loads nothing until Init, which loads the
// driver root's library (its constructor marks the file) and starts it
// (the init mark); a missing library fails Init, not NewLazyNVML.
func TestLazyNVML(t *testing.T) {
	o, lib := rootOptions(t, devices.Auto)
	loaded, inits := filepath.Join(t.TempDir(), "loaded"), filepath.Join(t.TempDir(), "inits")
	fakenvmllib.Build(t, lib, fakenvmllib.Options{Version: "550.54.15", Mark: loaded})
	t.Setenv(fakenvmllib.EnvInitMark, inits)
	n := devices.NewLazyNVML(&o)
	_, err := os.Stat(loaded)
	require.ErrorIs(t, err, os.ErrNotExist, "NewLazyNVML loaded the library")
	require.NoError(t, n.Init())
	v, err := n.SystemDriverVersion()
	require.NoError(t, n.Shutdown())
	got, _ := os.ReadFile(inits)
	assert.NoError(t, err, "driver version")
	assert.Equal(t, "550.54.15", v, "driver version")
	assert.Equal(t, "init\n", string(got), "nvmlInit marks")
	o.Roots.Driver = t.TempDir()
	assert.ErrorContains(t, devices.NewLazyNVML(&o).Init(), "libnvidia-ml.so.1", "Init without a library")
}
