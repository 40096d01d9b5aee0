package nvcli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
)

// WriteInfo's text and CSV layouts describe the same GPUs; facts only NVML
// has are N/A on procfs. (The CLI's golden test pins the whole output on
// the NVML mock.)
func TestWriteInfo(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	d := &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}}
	procfs, err := nvcontainer.OpenHost(context.Background(), d, devices.Procfs)
	require.NoError(t, err)
	d.NVML = fh.NVML
	nvml, err := nvcontainer.OpenHost(context.Background(), d, devices.NVML)
	require.NoError(t, err)
	g := nvml.Devices.GPUs[3]
	for _, tc := range []struct {
		name string
		host *nvcontainer.Host
		opts *nvcli.InfoOptions
		want []string
	}{
		{"text, nvml", nvml, nil, []string{"NVRM version:   " + fh.DriverVersion + "\nCUDA version:   " + fh.CUDAVersion + "\n\nDevice Index:   0\n",
			"\nDevice Index:   3\nDevice Minor:   3\nModel:          " + g.Model + "\nBrand:          " + g.Brand + "\nGPU UUID:       " + g.UUID +
				"\nBus Location:   " + g.BusID + "\nArchitecture:   " + g.ComputeCapability + "\n\nDevice Index:   4\n"}},
		{"text, procfs", procfs, &nvcli.InfoOptions{}, []string{"CUDA version:   N/A\n", "\nBrand:          N/A\nGPU UUID:       " + g.UUID + "\n",
			"\nArchitecture:   N/A\n"}},
		{"csv, nvml", nvml, &nvcli.InfoOptions{CSV: true}, []string{"NVRM version,CUDA version\n" + fh.DriverVersion + "," + fh.CUDAVersion +
			"\n\nDevice Index,Device Minor,Model,Brand,GPU UUID,Bus Location,Architecture\n0,0,",
			"\n3,3," + g.Model + "," + g.Brand + "," + g.UUID + "," + g.BusID + "," + g.ComputeCapability + "\n4,4,"}},
		{"csv, procfs", procfs, &nvcli.InfoOptions{CSV: true}, []string{"\n" + fh.DriverVersion + ",N/A\n", ",N/A," + g.UUID + "," + g.BusID + ",N/A\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, nvcli.WriteInfo(&b, tc.host, tc.opts))
			for _, w := range tc.want {
				assert.Contains(t, b.String(), w)
			}
			want := map[bool]int{false: 2 + 8*8, true: 4 + 8}[tc.opts != nil && tc.opts.CSV]
			assert.Equal(t, want, strings.Count(b.String(), "\n"), "lines")
		})
	}
	require.NotEmpty(t, g.Brand, "the NVML host lacks brand: %+v", g)
	require.NotEmpty(t, g.ComputeCapability, "the NVML host lacks architecture: %+v", g)
	require.NotEmpty(t, nvml.Driver.Version().CUDA, "the NVML host lacks CUDA version")
	assert.Error(t, nvcli.WriteInfo(&bytes.Buffer{}, &nvcontainer.Host{}, nil), "WriteInfo of an empty host")
}
