package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
)

func TestRootsWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want driver.Roots
	}{
		{"zero is the running host", driver.Roots{}, driver.Roots{Driver: "/", Proc: "/proc", Dev: "/dev", LDCache: "/etc/ld.so.cache", Sys: "/sys"}},
		{"dev inside the driver root", driver.Roots{Driver: "/run/nvidia/driver"},
			driver.Roots{Driver: "/run/nvidia/driver", Proc: "/proc", Dev: "/run/nvidia/driver/dev", LDCache: "/etc/ld.so.cache", Sys: "/sys"}},
		{"set roots are kept", driver.Roots{Driver: "/d", Proc: "/host/proc", Dev: "/host/dev", LDCache: "/c", Sys: "/host/sys"},
			driver.Roots{Driver: "/d", Proc: "/host/proc", Dev: "/host/dev", LDCache: "/c", Sys: "/host/sys"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.in.WithDefaults())
		})
	}
}

// TestOneDevRoot: under a driver root other than /, driver and devices take
// the same dev root, <driver root>/dev, when none is given: the driver
// looks for WSL's dxg there, devices for its nodes.
func TestOneDevRoot(t *testing.T) {
	h, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(h.Root, "dev", "dxg"), nil, 0o644))
	roots := driver.Roots{Driver: h.Root, Proc: h.ProcRoot}
	d, err := driver.Open(&driver.Options{Roots: roots})
	require.NoError(t, err)
	g, err := devices.Discover(context.Background(), &devices.Options{Backend: devices.Procfs, Roots: roots})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(h.Root, "dev"), d.Roots().Dev, "driver's dev root")
	assert.Equal(t, d.Roots().Dev, g.Roots.Dev, "devices' dev root")
	assert.True(t, d.WSL(), "driver: <driver root>/dev/dxg exists")
	assert.Equal(t, driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot, LDCache: driver.DefaultLDCache, Sys: driver.DefaultSysRoot}, d.Roots(), "driver roots")
}
