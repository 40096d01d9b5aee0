package cdispec_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// ver is the simulated hosts' driver version.
const ver = nvctest.DefaultDriverVersion

// debianRootfs is a Debian-like image with a few system dirs.
const debianRootfs = `
file etc/debian_version "12.5\n"
dir  usr/lib/x86_64-linux-gnu
dir  usr/bin
dir  etc/ld.so.conf.d
`

// compatRootfs is a Debian CUDA image with forward-compatibility libraries
// of driver version v, reached through the usual absolute symlink.
func compatRootfs(v string) string {
	return debianRootfs + `
dir     usr/local/cuda-12.8/compat
file    usr/local/cuda-12.8/compat/libcuda.so.` + v + ` "ELF"
file    usr/local/cuda-12.8/compat/libnvidia-ptxjitcompiler.so.` + v + ` "ELF"
symlink usr/local/cuda-12.8/compat/libcuda.so.1 libcuda.so.` + v + `
symlink usr/local/cuda-12.8/compat/libcuda.so libcuda.so.1
file    usr/local/cuda-12.8/compat/README "not a library"
symlink usr/local/cuda /usr/local/cuda-12.8
`
}

// testHost is a simulated host opened the way a runtime opens one.
type testHost struct {
	sim  *nvctest.Host
	host *nvcontainer.Host
}

// newTestHost simulates a host (nil opts: an 8-GPU DGX A100, Debian
// layout) and opens it with NVML, so arch and brand are known.
func newTestHost(tb testing.TB, opts *nvctest.Options) *testHost {
	tb.Helper()
	return openTestHost(tb, nvctest.NewHost(tb, nvctest.DGXA100, opts), devices.NVML)
}

func openTestHost(tb testing.TB, sim *nvctest.Host, backend devices.Backend) *testHost {
	tb.Helper()
	host, err := sim.Open(backend)
	require.NoError(tb, err, "opening the simulated host")
	return &testHost{sim: sim, host: host}
}

// migHost is a DGX A100 with GPU 1 split into two MIG devices and GPU 3
// into one.
func migHost(t *testing.T, backend devices.Backend) *testHost {
	t.Helper()
	sim := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}, 3: {"1c.3g.20gb"}}})
	return openTestHost(t, sim, backend)
}

// privReq builds a request from an environment, privileged (so that
// NVIDIA_MIG_* are allowed).
func privReq(tb testing.TB, env ...string) *request.Request {
	tb.Helper()
	req, err := request.New(request.Input{Env: env, Privileged: true}, nil)
	require.NoError(tb, err)
	return req
}

// capsRequest asks for all GPUs with caps.
func capsRequest(caps capabilities.Set) *request.Request {
	return &request.Request{Devices: request.Devices{Mode: request.DevicesAll}, Capabilities: caps}
}

// compatRequest asks for all GPUs with compute and utility in compat mode.
func compatRequest(mode request.CUDACompatMode) *request.Request {
	req := capsRequest(capabilities.Of(capabilities.Compute, capabilities.Utility))
	req.CUDACompatMode = mode
	return req
}

// listRequest asks for the devices ids with caps.
func listRequest(ids []string, caps capabilities.Set) *request.Request {
	return &request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: ids}, Capabilities: caps}
}

// plan makes a plan for rootfs (a tree spec, or "" for no rootfs), read
// at its host path (no container process), and fails tb on error.
func (h *testHost) plan(tb testing.TB, req *request.Request, spec string, opts *nvcontainer.PlanOptions) *nvcontainer.Plan {
	tb.Helper()
	ctr := nvcontainer.Container{}
	if spec != "" {
		ctr.Rootfs = testutil.Tree(tb, spec)
	}
	p, err := nvcontainer.NewPlan(h.host, req, ctr, opts)
	require.NoError(tb, err, "planning")
	return p
}
