package nvcontainer_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
)

// WriteInfo's text and CSV layouts describe the same GPUs; facts only NVML
// has are N/A on procfs. (The CLI's golden test pins the whole output on
// the NVML mock.)
func TestWriteInfo(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver.Options{Root: fh.Root, ProcRoot: fh.ProcRoot, DevRoot: fh.DevRoot}
	procfs, err := nvcontainer.OpenHost(context.Background(), d, devices.Procfs)
	if err != nil {
		t.Fatal(err)
	}
	d.NVML = fh.NVML
	nvml, err := nvcontainer.OpenHost(context.Background(), d, devices.NVML)
	if err != nil {
		t.Fatal(err)
	}
	g := nvml.Devices.GPUs[3]
	for _, tc := range []struct {
		name string
		host *nvcontainer.Host
		opts *nvcontainer.InfoOptions
		want []string
	}{
		{"text, nvml", nvml, nil, []string{"NVRM version:   " + fh.DriverVersion + "\nCUDA version:   " + fh.CUDAVersion + "\n\nDevice Index:   0\n",
			"\nDevice Index:   3\nDevice Minor:   3\nModel:          " + g.Model + "\nBrand:          " + g.Brand + "\nGPU UUID:       " + g.UUID +
				"\nBus Location:   " + g.BusID + "\nArchitecture:   " + g.ComputeCapability + "\n\nDevice Index:   4\n"}},
		{"text, procfs", procfs, &nvcontainer.InfoOptions{}, []string{"CUDA version:   N/A\n", "\nBrand:          N/A\nGPU UUID:       " + g.UUID + "\n",
			"\nArchitecture:   N/A\n"}},
		{"csv, nvml", nvml, &nvcontainer.InfoOptions{CSV: true}, []string{"NVRM version,CUDA version\n" + fh.DriverVersion + "," + fh.CUDAVersion +
			"\n\nDevice Index,Device Minor,Model,Brand,GPU UUID,Bus Location,Architecture\n0,0,",
			"\n3,3," + g.Model + "," + g.Brand + "," + g.UUID + "," + g.BusID + "," + g.ComputeCapability + "\n4,4,"}},
		{"csv, procfs", procfs, &nvcontainer.InfoOptions{CSV: true}, []string{"\n" + fh.DriverVersion + ",N/A\n", ",N/A," + g.UUID + "," + g.BusID + ",N/A\n"}},
	} {
		var b bytes.Buffer
		if err := nvcontainer.WriteInfo(&b, tc.host, tc.opts); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, b.String())
			}
		}
		lines := strings.Count(b.String(), "\n")
		if want := map[bool]int{false: 2 + 8*8, true: 4 + 8}[tc.opts != nil && tc.opts.CSV]; lines != want {
			t.Errorf("%s: %d lines, want %d", tc.name, lines, want)
		}
	}
	if g.Brand == "" || g.ComputeCapability == "" || nvml.Devices.CUDAVersion == "" {
		t.Fatalf("the NVML host lacks brand, architecture or CUDA version: %+v", g)
	}
	if err := nvcontainer.WriteInfo(&bytes.Buffer{}, &nvcontainer.Host{}, nil); err == nil {
		t.Error("WriteInfo of an empty host succeeded")
	}
}
