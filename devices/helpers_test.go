package devices_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
)

// genHost generates a simulated host in a temp dir.
func genHost(tb testing.TB, o *fakehost.Options) *fakehost.Host {
	tb.Helper()
	h, err := fakehost.Generate(tb.TempDir(), o)
	require.NoError(tb, err)
	return h
}

// optionsFor points discovery at h with backend b. The Procfs backend gets
// an NVML whose every call panics, so a test fails if it touches NVML.
func optionsFor(h *fakehost.Host, b devices.Backend) *devices.Options {
	o := &devices.Options{Backend: b, NVML: h.NVML, Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}}
	if b == devices.Procfs {
		o.NVML = panicNVML{}
	}
	return o
}

// panicNVML panics on every call: its embedded interface is nil.
type panicNVML struct{ devices.NVMLInterface }

// countingNVML counts Init and Shutdown calls and can fail Init.
type countingNVML struct {
	devices.NVMLInterface
	initErr          error
	inits, shutdowns int
}

func (c *countingNVML) Init() error {
	c.inits++
	if c.initErr != nil {
		return c.initErr
	}
	return c.NVMLInterface.Init()
}

func (c *countingNVML) Shutdown() error {
	c.shutdowns++
	return c.NVMLInterface.Shutdown()
}

func discover(tb testing.TB, h *fakehost.Host, b devices.Backend) *devices.Host {
	tb.Helper()
	d, err := devices.Discover(context.Background(), optionsFor(h, b))
	require.NoError(tb, err)
	require.Equal(tb, b, d.Backend, "backend")
	return d
}

func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old, "%s lacks %q", path, old)
	// The generated proc files are read-only: replace rather than write.
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o444))
}
