package driver_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
)

// TestLDCacheLibrary: after Files, every library it selected has the
// loader cache's reading under its HostPath, with the SONAME the driver
// read, on a first call and on a second (the driver's memo answering);
// paths it did not read, and paths outside its root, have none; a nil
// Driver has none.
func TestLDCacheLibrary(t *testing.T) {
	h, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	o := driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}}
	d := open(t, o)
	for range 2 {
		fs, err := d.Files(capabilities.All)
		require.NoError(t, err)
		libs := append(fs.Libraries, fs.Libraries32...)
		require.NotEmpty(t, libs)
		for _, f := range libs {
			l, ok := d.LDCacheLibrary(f.HostPath)
			require.True(t, ok, "no reading of %s", f.HostPath)
			soname, ok := l.Soname()
			require.True(t, ok, "%s: no SONAME", f.HostPath)
			require.Equal(t, f.Soname, soname, "%s", f.HostPath)
			_, ok = d.LDCacheLibrary(f.Path)
			require.Equal(t, h.Root == "/", ok, "%s: a reading under the path inside the root", f.Path)
		}
		_, ok := d.LDCacheLibrary(h.Root + "/etc/passwd")
		require.False(t, ok, "a reading of a file never read")
		_, ok = d.LDCacheLibrary(h.Root + "x" + libs[0].Path)
		require.False(t, ok, "a reading of a path outside the root")
	}
	var none *driver.Driver
	_, ok := none.LDCacheLibrary("/usr/lib/libcuda.so.1")
	require.False(t, ok, "a nil Driver has a reading")
}
