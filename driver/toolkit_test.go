package driver_test

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/ldcache"
)

// TestToolkitLibraries checks Options.ToolkitLibraries on both generated
// layouts, whose libvdpau_nvidia.so.<version> lives in the vdpau/ dir of
// the library dirs (not in the cache) and which get a
// libnvidia-nvvm70.so.4 (R575's name, not ending in the driver version)
// listed in the cache: with it, Files finds both (vdpau native and
// 32-bit, without the warning); without it, libnvidia-container's rules
// find neither and warn about libvdpau_nvidia.so.
func TestToolkitLibraries(t *testing.T) {
	caps := capabilities.Of(capabilities.Compute, capabilities.Video, capabilities.Compat32)
	for _, o := range hosts {
		t.Run(o.DriverVersion, func(t *testing.T) {
			h, _ := generate(t, o, driver.Options{})
			nvvm70 := path.Join(h.LibDir, "libnvidia-nvvm70.so.4")
			require.NoError(t, elfwriter.WriteFile(filepath.Join(h.Root, nvvm70), elfwriter.Library("libnvidia-nvvm70.so.4"), 0o755))
			c, err := ldcache.Build(context.Background(), h.Root, &ldcache.BuildOptions{GOARCH: "amd64", NoLinks: true})
			require.NoError(t, err)
			require.NoError(t, ldcache.WriteFileInRoot(h.Root, "/etc/ld.so.cache", c))
			vdpau := path.Join(h.LibDir, "vdpau", "libvdpau_nvidia.so."+h.DriverVersion)
			vdpau32 := path.Join(h.Lib32Dir, "vdpau", "libvdpau_nvidia.so."+h.DriverVersion)

			for _, toolkit := range []bool{false, true} {
				d, err := driver.Open(&driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}, NVML: h.NVML, ToolkitLibraries: toolkit})
				require.NoError(t, err)
				fs, err := d.Files(caps)
				require.NoError(t, err)
				paths := func(files []driver.File) []string {
					var ps []string
					for _, f := range files {
						ps = append(ps, f.Path)
					}
					return ps
				}
				warned := slices.Contains(fs.Warnings, driver.Warning{Kind: driver.Library, Name: "libvdpau_nvidia.so"})
				if toolkit {
					assert.Contains(t, paths(fs.Libraries), vdpau)
					assert.Contains(t, paths(fs.Libraries), nvvm70)
					assert.Contains(t, paths(fs.Libraries32), vdpau32)
					assert.False(t, warned, "warning for libvdpau_nvidia.so: %v", fs.Warnings)
				} else {
					assert.NotContains(t, paths(fs.Libraries), vdpau)
					assert.NotContains(t, paths(fs.Libraries), nvvm70)
					assert.True(t, warned, "no warning for libvdpau_nvidia.so: %v", fs.Warnings)
				}
			}
		})
	}
}

// TestLibrarySearchPaths: a driver library the loader cache points at
// but which was moved to a dir no cache lists is found through
// Options.LibrarySearchPaths (inside the driver root), and is missing,
// with its warning, without them.
func TestLibrarySearchPaths(t *testing.T) {
	const name = "libnvidia-ptxjitcompiler.so"
	for _, o := range hosts {
		t.Run(o.DriverVersion, func(t *testing.T) {
			h, _ := generate(t, o, driver.Options{})
			file := name + "." + h.DriverVersion
			moved := path.Join("/opt/nvidia/lib64", file)
			require.NoError(t, os.MkdirAll(filepath.Join(h.Root, "/opt/nvidia/lib64"), 0o755))
			require.NoError(t, os.Rename(filepath.Join(h.Root, h.LibDir, file), filepath.Join(h.Root, moved)))
			for _, tc := range []struct {
				name   string
				search []string
				found  bool
			}{
				{"none", nil, false},
				{"other dir", []string{"/opt/other"}, false},
				{"search dir", []string{"/opt/other", "opt/nvidia/lib64"}, true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					d, err := driver.Open(&driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}, NVML: h.NVML, LibrarySearchPaths: tc.search})
					require.NoError(t, err)
					fs, err := d.Files(capabilities.Of(capabilities.Compute))
					require.NoError(t, err)
					var paths []string
					for _, f := range fs.Libraries {
						paths = append(paths, f.Path)
					}
					warned := slices.Contains(fs.Warnings, driver.Warning{Kind: driver.Library, Name: name})
					if tc.found {
						assert.Contains(t, paths, moved)
						assert.False(t, warned, "warnings %v", fs.Warnings)
					} else {
						assert.NotContains(t, paths, moved)
						assert.True(t, warned, "warnings %v", fs.Warnings)
					}
				})
			}
		})
	}
}
