package nvcontainer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// The rootfs trees plans are made for: a Debian-like and a Fedora-like
// image, each with a few system dirs.
const (
	debianRootfs = `
file etc/debian_version "12.5\n"
dir  usr/lib/x86_64-linux-gnu
dir  usr/bin
dir  etc/ld.so.conf.d
`
	fedoraRootfs = `
file    etc/fedora-release "Fedora release 40\n"
dir     usr/lib64
dir     usr/lib
dir     usr/bin
symlink lib64 usr/lib64
`
)

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
	host, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot, Sys: fh.SysRoot}, NVML: fh.NVML}, backend)
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

// capsRequest asks for all GPUs with caps.
func capsRequest(caps capabilities.Set) *request.Request {
	return &request.Request{Devices: request.Devices{Mode: request.DevicesAll}, Capabilities: caps}
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
	require.NoError(tb, err)
	return p
}

func mountTargets(p *nvcontainer.Plan, kind nvcontainer.MountKind) []string {
	var out []string
	for _, m := range p.Mounts {
		if m.Kind == kind {
			out = append(out, m.Target)
		}
	}
	return out
}

func findMount(p *nvcontainer.Plan, target string) (nvcontainer.Mount, bool) {
	for _, m := range p.Mounts {
		if m.Target == target {
			return m, true
		}
	}
	for _, t := range p.Tmpfs {
		for _, m := range t.Mounts {
			if m.Target == target {
				return m, true
			}
		}
	}
	return nvcontainer.Mount{}, false
}

func findLink(p *nvcontainer.Plan, path string) (string, bool) {
	for _, l := range p.Symlinks {
		if l.Path == path {
			return l.Target, true
		}
	}
	return "", false
}

func hasRule(p *nvcontainer.Plan, major, minor uint32) bool {
	for _, r := range p.CgroupRules {
		if r.Major == major && r.Minor == minor && r.Type == "c" && r.Access == "rw" {
			return true
		}
	}
	return false
}

func findTmpfs(p *nvcontainer.Plan, target string) (nvcontainer.Tmpfs, bool) {
	for _, t := range p.Tmpfs {
		if t.Target == target {
			return t, true
		}
	}
	return nvcontainer.Tmpfs{}, false
}

// encode is the plan's JSON, as a dry run prints it.
func encode(tb testing.TB, p *nvcontainer.Plan) []byte {
	tb.Helper()
	b, err := p.JSON()
	require.NoError(tb, err)
	return b
}
