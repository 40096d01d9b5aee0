package nvcontainer_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/requirement"
)

// cuda124Require is NVIDIA_REQUIRE_CUDA of the nvidia/cuda:12.4.1 images
// (base, runtime, devel; ubuntu22.04, x86_64 and sbsa alike), as their
// Dockerfiles set it.
const cuda124Require = "cuda>=12.4 " +
	"brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471 brand=nvidia,driver>=470,driver<471 " +
	"brand=nvidiartx,driver>=470,driver<471 brand=geforce,driver>=470,driver<471 brand=geforcertx,driver>=470,driver<471 " +
	"brand=quadro,driver>=470,driver<471 brand=quadrortx,driver>=470,driver<471 brand=titan,driver>=470,driver<471 " +
	"brand=titanrtx,driver>=470,driver<471 " +
	"brand=tesla,driver>=525,driver<526 brand=unknown,driver>=525,driver<526 brand=nvidia,driver>=525,driver<526 " +
	"brand=nvidiartx,driver>=525,driver<526 brand=geforce,driver>=525,driver<526 brand=geforcertx,driver>=525,driver<526 " +
	"brand=quadro,driver>=525,driver<526 brand=quadrortx,driver>=525,driver<526 brand=titan,driver>=525,driver<526 " +
	"brand=titanrtx,driver>=525,driver<526 " +
	"brand=tesla,driver>=535,driver<536 brand=unknown,driver>=535,driver<536 brand=nvidia,driver>=535,driver<536 " +
	"brand=nvidiartx,driver>=535,driver<536 brand=geforce,driver>=535,driver<536 brand=geforcertx,driver>=535,driver<536 " +
	"brand=quadro,driver>=535,driver<536 brand=quadrortx,driver>=535,driver<536 brand=titan,driver>=535,driver<536 " +
	"brand=titanrtx,driver>=535,driver<536"

// cuda124Env is the environment the nvidia/cuda:12.4.1-base-ubuntu22.04
// image gives a container, as far as the toolkit reads it.
var cuda124Env = []string{
	"NVIDIA_REQUIRE_CUDA=" + cuda124Require,
	"NV_CUDA_CUDART_VERSION=12.4.127-1",
	"NV_CUDA_COMPAT_PACKAGE=cuda-compat-12-4",
	"CUDA_VERSION=12.4.1",
	"NVIDIA_VISIBLE_DEVICES=all",
	"NVIDIA_DRIVER_CAPABILITIES=compute,utility",
	"PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
}

// procfsHost generates a DGX A100 with driver nvrm and opens it the way a
// static runtime does: no NVML anywhere, devices found through procfs.
func procfsHost(t *testing.T, nvrm string) *testHost {
	t.Helper()
	fh, err := fakehost.Generate(t.TempDir(), &fakehost.Options{DriverVersion: nvrm})
	require.NoError(t, err)
	host, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}}, devices.Procfs)
	require.NoError(t, err)
	require.Equal(t, devices.Procfs, host.Devices.Backend, "host of %s: backend; want procfs", nvrm)
	require.Empty(t, host.Driver.Version().CUDA, "host of %s: CUDA from NVML; want none", nvrm)
	return &testHost{fake: fh, host: host}
}

// TestPlanCUDAImageProcfs: a standard nvidia/cuda:12.4.1 image configures
// on a host whose facts come from procfs alone, when the driver runs CUDA
// 12.4 (the first clause, cuda>=12.4, holds through the driver's table)
// and refuses otherwise: with libnvidia-container's requirement error on
// a 12.3 driver, naming the unknown brand on an R535 driver (whose brand
// clauses would need NVML), and naming the unknown CUDA version above the
// table for an image that asks more than the table knows.
func TestPlanCUDAImageProcfs(t *testing.T) {
	for _, nvrm := range []string{"550.54.15", "550.54.14", "570.124.06", "616.10"} {
		t.Run("configures on "+nvrm, func(t *testing.T) {
			h := procfsHost(t, nvrm)
			p := h.plan(t, privReq(t, cuda124Env...), debianRootfs, nil)
			assert.Equal(t, []string{cuda124Require}, p.Requirements, "plan: requirements; want the image's")
			assert.Len(t, p.GPUs, 8, "plan: GPUs")
			assert.Empty(t, p.Driver.CUDAVersion, "plan CUDA version; the plan records NVML's only")
		})
	}
	for _, tc := range []struct {
		nvrm, env string
		msg       string // the whole error
		unknown   string // the unknown fact, "" when none
	}{
		{"545.23.08", "", "requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container", ""},
		{"550.40.07", "", "requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container", ""},
		{"535.104.05", "", "requirement error: unsatisfied condition: cuda>=12.4 (cannot check brand=tesla: device brand unknown: devices were discovered without NVML (backend procfs))", "device brand"},
		{"470.82.01", "", "requirement error: unsatisfied condition: cuda>=12.4 (cannot check brand=tesla: device brand unknown: devices were discovered without NVML (backend procfs))", "device brand"},
		{"616.10", "NVIDIA_REQUIRE_CUDA=cuda>=13.4", "requirement error: unsatisfied condition: cuda>=13.4 (cannot check cuda>=13.4: CUDA version above 13.3 unknown: devices were discovered without NVML (backend procfs))", "CUDA version above 13.3"},
	} {
		t.Run("refused on "+tc.nvrm, func(t *testing.T) {
			h := procfsHost(t, tc.nvrm)
			env := cuda124Env
			if tc.env != "" {
				env = append(slices.Clone(cuda124Env), tc.env)
			}
			p, err := nvcontainer.NewPlan(h.host, privReq(t, env...), nvcontainer.Container{}, nil)
			var pe *nvcontainer.PlanError
			var ue *requirement.UnsatisfiedError
			require.Nil(t, p, "plan made (error %v); want an unsatisfied requirement", err)
			require.ErrorAs(t, err, &pe, "want an unsatisfied requirement")
			require.Equal(t, nvcontainer.StageRequirement, pe.Stage, "error %v; want an unsatisfied requirement", err)
			require.ErrorAs(t, err, &ue, "want an unsatisfied requirement")
			assert.EqualError(t, err, tc.msg)
			assert.Equal(t, tc.unknown != "", errors.Is(err, requirement.ErrUnknownFact), "ErrUnknownFact (unknown fact %q), want %q", ue.Fact, tc.unknown)
			assert.Equal(t, tc.unknown, ue.Fact, "unknown fact")
		})
	}
}
