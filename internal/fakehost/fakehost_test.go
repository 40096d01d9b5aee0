package fakehost_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
)

// TestGenerate generates whole hosts and checks that the driver half and
// the GPU half describe the same driver.
func TestGenerate(t *testing.T) {
	for _, tc := range []struct {
		name             string
		opts             fakehost.Options
		libDir, lib32Dir string
		release, version string
		cuda             string
	}{
		{"default", fakehost.Options{}, "/usr/lib/x86_64-linux-gnu", "/usr/lib/i386-linux-gnu", "etc/debian_version", fakehost.DefaultDriverVersion, "12.4"},
		{"fedora", fakehost.Options{Layout: fakehost.Fedora, DriverVersion: "535.161.08"}, "/usr/lib64", "/usr/lib", "etc/fedora-release", "535.161.08", "12.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := fakehost.Generate(t.TempDir(), &tc.opts)
			require.NoError(t, err, "Generate %+v", tc.opts)
			assert.Equal(t, tc.libDir, h.LibDir, "%+v: host %+v", tc.opts, h)
			assert.Equal(t, tc.lib32Dir, h.Lib32Dir, "%+v: host %+v", tc.opts, h)
			assert.Equal(t, tc.version, h.DriverVersion, "%+v: host %+v", tc.opts, h)
			assert.Equal(t, tc.cuda, h.CUDAVersion, "%+v: host %+v", tc.opts, h)
			for _, p := range []string{
				tc.release, "etc/ld.so.cache",
				filepath.Join(h.LibDir, "libcuda.so."+tc.version),
				filepath.Join(h.Lib32Dir, "libcuda.so."+tc.version),
				"usr/bin/nvidia-smi",
				"lib/firmware/nvidia/" + tc.version + "/gsp_ga10x.bin",
				"var/run/nvidia-persistenced/socket",
				"tmp/nvidia-mps",
			} {
				_, err := os.Stat(filepath.Join(h.Root, p))
				assert.NoError(t, err, "%s: %s", tc.release, p)
			}
			v, err := os.ReadFile(filepath.Join(h.ProcRoot, "driver/nvidia/version"))
			require.NoError(t, err, "procfs version")
			assert.Contains(t, string(v), "  "+tc.version+"  ", "procfs version does not name %s", tc.version)
		})
	}
}

// BenchmarkGenerate measures a whole default host (eight A100s, the driver
// files, the cache).
func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		_, err := fakehost.Generate(b.TempDir(), nil)
		require.NoError(b, err, "Generate")
	}
}
