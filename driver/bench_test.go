package driver_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// BenchmarkFiles measures Files on a generated host (goal for all: 1 ms),
// after the first call, as a runtime hook calls it for container after
// container. The host is generated, then left a second and a half, as a
// real driver is installed well before containers start: Files keeps
// lookups only in directories whose last change is a second old.
func BenchmarkFiles(b *testing.B) {
	_, d := generate(b, fakehost.Options{}, driver.Options{})
	time.Sleep(1500 * time.Millisecond)
	for _, caps := range []capabilities.Set{capabilities.All, capabilities.HookDefault} {
		b.Run(caps.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := d.Files(caps); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpen measures Open: the NVML mock's version, the cache parsed
// and indexed.
func BenchmarkOpen(b *testing.B) {
	h, err := fakehost.Generate(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	o := &driver.Options{Root: h.Root, ProcRoot: h.ProcRoot, DevRoot: h.DevRoot, NVML: h.NVML}
	for b.Loop() {
		if _, err := driver.Open(o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLdconfigP is the alternative a script runs to find the driver's
// libraries: glibc's `ldconfig -p` on the same cache (a listing only: no
// resolution, no checks). Compare with BenchmarkFiles/all of the same run.
func BenchmarkLdconfigP(b *testing.B) {
	ldconfig := testutil.RequireCommand(b, "ldconfig")
	h, err := fakehost.Generate(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(h.Root, "etc/ld.so.cache")
	for b.Loop() {
		if err := exec.Command(ldconfig, "-p", "-C", cache).Run(); err != nil {
			b.Fatal(err)
		}
	}
}
