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

func TestSimulate(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	h, err := fakehost.Simulate("dgxh100", map[int][]string{1: {"3g.40gb"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(h.Root), "nvc-simulate-") || filepath.Dir(h.Root) != os.Getenv("TMPDIR") {
		t.Errorf("host generated in %s, want a new nvc-simulate-* dir in $TMPDIR", h.Root)
	}
	if _, err := os.Stat(filepath.Join(h.ProcRoot, "driver/nvidia/capabilities/gpu1/mig/gi1")); err != nil {
		t.Errorf("GPU 1 is not in MIG mode: %v", err)
	}
	fi, err := os.Stat(filepath.Join(h.DevRoot, "nvidia0"))
	if err != nil || (fi.Mode()&os.ModeCharDevice != 0) != (os.Geteuid() == 0) {
		t.Errorf("/dev/nvidia0 is %v (%v); want a character device exactly when root", fi.Mode(), err)
	}
	os.RemoveAll(h.Root)

	_, err = fakehost.Simulate("dgx1", nil)
	if err == nil || !strings.Contains(err.Error(), `unknown --simulate machine "dgx1" (want one of dgxa100,`) {
		t.Errorf("unknown machine: %v", err)
	}
	_, err = fakehost.Simulate("dgxa100", map[int][]string{0: {"no-such-profile"}})
	if err == nil || !strings.HasPrefix(err.Error(), "simulating dgxa100: ") {
		t.Errorf("bad MIG profile: %v", err)
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("failed simulations left %v behind", left)
	}
}
