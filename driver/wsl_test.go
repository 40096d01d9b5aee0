package driver_test

import (
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
)

// wslHost generates a simulated WSL2 host and opens its driver.
func wslHost(t *testing.T, o *fakehost.WSLOptions) (*fakehost.Host, *driver.Driver) {
	t.Helper()
	fh, err := fakehost.GenerateWSL(t.TempDir(), o)
	require.NoError(t, err)
	return fh, open(t, driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}})
}

// TestWSLDriverStore: on a WSL2 host (no /proc/driver/nvidia, no NVML) the
// driver opens, its version comes from the driver store's nv_dispi.inf,
// the NVIDIA store dir is found among the adapters' (another adapter's
// sorts first), and Files lists the store's files at their own paths,
// the toolkit's list first, in its order, then the other libraries and
// .bin/.dll files, whatever the capabilities.
func TestWSLDriverStore(t *testing.T) {
	for _, ver := range []string{"", "560.94", "572.16"} {
		t.Run("version-"+ver, func(t *testing.T) {
			fh, d := wslHost(t, &fakehost.WSLOptions{DriverVersion: ver})
			require.True(t, d.WSL(), "WSL()")
			assert.Equal(t, driver.Version{NVRM: fh.DriverVersion, Source: driver.FromDriverStore}, d.Version(), "version")
			assert.Equal(t, fakehost.WSLStoreDir, d.WSLDriverStore(), "driver store dir")
		})
	}
	fh, d := wslHost(t, nil)
	for _, caps := range []capabilities.Set{0, capabilities.Of(capabilities.Utility), capabilities.All} {
		t.Run("caps-"+caps.String(), func(t *testing.T) {
			fs, err := d.Files(caps)
			require.NoError(t, err)
			want := []string{"libcuda.so.1.1", "libcuda_loader.so", "libnvidia-ptxjitcompiler.so.1", "libnvidia-ml.so.1",
				"libnvidia-ml_loader.so", "libnvdxgdmal.so.1", "nvcubins.bin", "nvidia-smi", "libnvidia-encode.so.1", "nvapi64.dll"}
			var got []string
			for _, f := range fs.DriverStore {
				got = append(got, f.Name)
				p := path.Join(fakehost.WSLStoreDir, f.Name)
				assert.Equal(t, driver.DriverStore, f.Kind, "%s: kind", f.Name)
				assert.Equal(t, p, f.Path, "%s: path", f.Name)
				assert.Equal(t, p, f.ContainerPath, "%s: container path (its own)", f.Name)
				assert.Equal(t, filepath.Join(fh.Root, p), f.HostPath, "%s: host path", f.Name)
			}
			assert.Equal(t, want, got, "driver store files")
			require.NotEmpty(t, fs.DriverStore)
			assert.Equal(t, "libcuda.so.1", fs.DriverStore[0].Soname, "libcuda.so.1.1's SONAME")
			assert.Subset(t, fileNames(fs.All()), want, "All() leaves out driver store files")
		})
	}
}

func fileNames(fs []driver.File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// TestWSLDriverStoreHostile: a store file that is a symlink (out of the
// store, or out of the root) is not listed, a listed one missing is a
// warning; without an NVIDIA store dir (no libcuda.so.1.1) there is no
// driver.
func TestWSLDriverStoreHostile(t *testing.T) {
	fh, d := wslHost(t, nil)
	store := filepath.Join(fh.Root, fakehost.WSLStoreDir)
	require.NoError(t, os.Remove(filepath.Join(store, "libcuda_loader.so")))
	require.NoError(t, os.Symlink("/etc/os-release", filepath.Join(store, "libcuda_loader.so")))
	require.NoError(t, os.Symlink("../../../../../../../../etc/shadow", filepath.Join(store, "libevil.so.1")))
	require.NoError(t, os.Remove(filepath.Join(store, "nvcubins.bin")))
	fs, err := d.Files(capabilities.Of(capabilities.Utility))
	require.NoError(t, err)
	names := fileNames(fs.DriverStore)
	assert.NotContains(t, names, "libcuda_loader.so", "a symlinked store file was listed")
	assert.NotContains(t, names, "libevil.so.1", "a symlink out of the store was listed")
	assert.Contains(t, fs.Warnings, driver.Warning{Kind: driver.DriverStore, Name: fakehost.WSLStoreDir + "/libcuda_loader.so"})
	assert.Contains(t, fs.Warnings, driver.Warning{Kind: driver.DriverStore, Name: fakehost.WSLStoreDir + "/nvcubins.bin"})

	require.NoError(t, os.Remove(filepath.Join(store, "libcuda.so.1.1")))
	_, err = driver.Open(&driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}})
	require.ErrorIs(t, err, driver.ErrNoDriver, "a WSL host without an NVIDIA driver store dir")
	assert.ErrorContains(t, err, "NVIDIA driver store dir", "a WSL host without an NVIDIA driver store dir")
}

// TestNotWSL: off WSL no store dir is looked for and no file listed.
func TestNotWSL(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	d := open(t, driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}})
	assert.False(t, d.WSL())
	assert.Empty(t, d.WSLDriverStore())
	fs, err := d.Files(capabilities.All)
	require.NoError(t, err)
	assert.Empty(t, fs.DriverStore)
}
