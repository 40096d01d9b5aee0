package nvcli_test

import (
	"context"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// update rewrites the golden files: go test ./nvcontainer/nvcli -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testHost is a generated host opened the way a runtime opens one.
type testHost struct {
	fake *fakehost.Host
	host *nvcontainer.Host
}

// newTestHost generates a host (nil opts: an 8-GPU DGX A100, Debian
// layout) and opens it with NVML, so arch and brand are known.
func newTestHost(tb testing.TB, opts *fakehost.Options) *testHost {
	tb.Helper()
	fh, err := fakehost.Generate(tb.TempDir(), opts)
	require.NoError(tb, err)
	return openTestHost(tb, fh, devices.NVML)
}

func openTestHost(tb testing.TB, fh *fakehost.Host, backend devices.Backend) *testHost {
	tb.Helper()
	host, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}, NVML: fh.NVML}, backend)
	require.NoError(tb, err)
	return &testHost{fake: fh, host: host}
}

// privReq builds a request from an environment, privileged (so that
// NVIDIA_MIG_* are allowed).
func privReq(tb testing.TB, env ...string) *request.Request {
	tb.Helper()
	req, err := request.New(request.Input{Env: env, Privileged: true}, nil)
	require.NoError(tb, err)
	return req
}
