package driver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
)

// TestOpenWithoutLDCache checks a driver root without /etc/ld.so.cache
// (a driver container, a copied root): Open scans the standard library
// dirs, ld.so.conf and the trusted dirs instead of failing, and Files
// finds the same libraries, native and 32-bit, as through the cache, on
// both generated layouts.
func TestOpenWithoutLDCache(t *testing.T) {
	for _, o := range hosts {
		t.Run(o.DriverVersion, func(t *testing.T) {
			h, d := generate(t, o, driver.Options{})
			caps := capabilities.All
			want, err := d.Files(caps)
			require.NoError(t, err)
			require.NoError(t, os.Remove(filepath.Join(h.Root, "etc/ld.so.cache")))
			d, err = driver.Open(&driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}, NVML: h.NVML})
			require.NoError(t, err, "opening a driver root without ld.so.cache")
			got, err := d.Files(caps)
			require.NoError(t, err)
			assert.NotEmpty(t, got.Libraries)
			assert.Equal(t, gotFiles(want), gotFiles(got))
		})
	}
}
