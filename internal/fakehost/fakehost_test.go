package fakehost_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/internal/fakehost"
)

// TestGenerate generates whole hosts and checks that the driver half and
// the GPU half describe the same driver.
func TestGenerate(t *testing.T) {
	for _, tc := range []struct {
		opts             fakehost.Options
		libDir, lib32Dir string
		release, version string
		cuda             string
	}{
		{fakehost.Options{}, "/usr/lib/x86_64-linux-gnu", "/usr/lib/i386-linux-gnu", "etc/debian_version", fakehost.DefaultDriverVersion, "12.4"},
		{fakehost.Options{Layout: fakehost.Fedora, DriverVersion: "535.161.08"}, "/usr/lib64", "/usr/lib", "etc/fedora-release", "535.161.08", "12.2"},
	} {
		h, err := fakehost.Generate(t.TempDir(), &tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if h.LibDir != tc.libDir || h.Lib32Dir != tc.lib32Dir || h.DriverVersion != tc.version || h.CUDAVersion != tc.cuda {
			t.Errorf("%+v: host %+v", tc.opts, h)
		}
		for _, p := range []string{
			tc.release, "etc/ld.so.cache",
			filepath.Join(h.LibDir, "libcuda.so."+tc.version),
			filepath.Join(h.Lib32Dir, "libcuda.so."+tc.version),
			"usr/bin/nvidia-smi",
			"lib/firmware/nvidia/" + tc.version + "/gsp_ga10x.bin",
			"var/run/nvidia-persistenced/socket",
			"tmp/nvidia-mps",
		} {
			if _, err := os.Stat(filepath.Join(h.Root, p)); err != nil {
				t.Errorf("%s: %v", tc.release, err)
			}
		}
		v, err := os.ReadFile(filepath.Join(h.ProcRoot, "driver/nvidia/version"))
		if err != nil || !strings.Contains(string(v), "  "+tc.version+"  ") {
			t.Errorf("procfs version %q (%v) does not name %s", v, err, tc.version)
		}
	}
}

// BenchmarkGenerate measures a whole default host (eight A100s, the driver
// files, the cache).
func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		if _, err := fakehost.Generate(b.TempDir(), nil); err != nil {
			b.Fatal(err)
		}
	}
}
