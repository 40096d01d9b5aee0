package nvcontainer

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// planFor is NewPlan's plan for env (a privileged container's) and a new
// rootfs of layout l.
func planFor(t *testing.T, h *Host, l Layout, env ...string) *Plan {
	t.Helper()
	req, err := request.New(request.Input{Env: env, Privileged: true}, nil)
	require.NoError(t, err)
	dir := newRootfs(t, l)
	p, err := NewPlan(h, req, Container{Rootfs: dir}, nil)
	require.NoError(t, err)
	return p
}

// TestApplyMIG applies MIG plans: a MIG device (its access capability
// files bound inside the /proc/driver/nvidia mask, its nvidia-caps nodes),
// and MIG config and monitor "all" with an IMEX channel (the whole
// capabilities tree, the /dev/nvidia-caps directory, the channel node).
func TestApplyMIG(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	th := newTestHostWith(t, &fakehost.Options{RealNodes: true, MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	h := th.host
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"mig device", []string{"NVIDIA_VISIBLE_DEVICES=1:0", "NVIDIA_DRIVER_CAPABILITIES=utility"}},
		{"config and monitor all", []string{"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=utility", "NVIDIA_MIG_CONFIG_DEVICES=all",
			"NVIDIA_MIG_MONITOR_DEVICES=all", "NVIDIA_IMEX_CHANNELS=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planFor(t, h, fedoraLayout, tc.env...)
			c := startIn(t, fedoraLayout, false)
			host := recordHost(t, th.Root)
			require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil), "%q", tc.env)
			host.check(t)
			assert.Empty(t, checkApplied(c, p), "%q", tc.env)
			assert.True(t, hasMount(p, "/proc/driver/nvidia/capabilities", "gpu1/mig/gi1/access"), "%q: the plan has no MIG capability mount", tc.env)
		})
	}
}

// hasMount reports whether p mounts something at a target below dir
// ending in suffix, or dir itself when suffix is empty.
func hasMount(p *Plan, dir, suffix string) bool {
	var all []Mount
	for _, t := range p.Tmpfs {
		all = append(all, t.Mounts...)
	}
	for _, m := range append(all, p.Mounts...) {
		if m.Target == dir || (strings.HasPrefix(m.Target, dir+"/") && strings.HasSuffix(m.Target, suffix)) {
			return true
		}
	}
	return false
}

// TestApplyCUDACompat: an image with a newer libcuda in
// /usr/local/cuda/compat gets it first in the loader cache (ldconfig mode,
// nothing from the image mounted), and the dynamic loader loads it.
func TestApplyCUDACompat(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"})
	require.NoError(t, err)
	c := startIn(t, fedoraLayout, false)
	// As NVIDIA's cuda-compat packages ship it: the library and its
	// SONAME link.
	testutil.BuildTree(t, c.HostRootfs, "symlink usr/local/cuda/compat/libcuda.so.1 libcuda.so.560.28.03")
	require.NoError(t, elfwriter.WriteFile(filepath.Join(c.HostRootfs, "usr/local/cuda/compat/libcuda.so.560.28.03"), elfwriter.Library("libcuda.so.1", "libc.so.6"), 0o644))
	p, err := NewPlan(h.host, req, Container{PID: c.PID, Rootfs: c.HostRootfs}, nil)
	require.NoError(t, err)
	require.True(t, p.CUDACompat.Used, "NewPlan did not use the compat libraries: %+v, loader cache %+v", p.CUDACompat, p.LDCache)
	require.NotEmpty(t, p.LDCache.FirstDirs, "NewPlan did not use the compat libraries: %+v, loader cache %+v", p.CUDACompat, p.LDCache)
	require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil))
	out, err := c.Exec(t, "sh", "-c", "LD_DEBUG=libs chroot "+c.Rootfs+" "+cudaProg+" 2>&1; echo rc=$?")
	assert.NoError(t, err, "the loader did not take libcuda.so.1 from the compat dir:\n%s", out)
	assert.Contains(t, out, "rc=0", "the loader did not take libcuda.so.1 from the compat dir")
	assert.Contains(t, out, "trying file=/usr/local/cuda/compat/libcuda.so", "the loader did not take libcuda.so.1 from the compat dir")
}
