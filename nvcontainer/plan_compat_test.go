package nvcontainer_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

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

func compatRequest(mode request.CUDACompatMode) *request.Request {
	req := capsRequest(capabilities.Of(capabilities.Compute, capabilities.Utility))
	req.CUDACompatMode = mode
	return req
}

// TestPlanCompat checks the three CUDA forward-compatibility modes against
// images with newer, older and same-branch compat libraries.
func TestPlanCompat(t *testing.T) {
	h := newTestHost(t, nil)
	const dir = "/usr/local/cuda-12.8/compat"
	for _, tc := range []struct {
		name      string
		mode      request.CUDACompatMode
		spec      string
		wantMode  request.CUDACompatMode
		used      bool
		firstDirs []string
		mounted   []string // basenames mounted from the image
		libcuda1  string   // target of LibDir/libcuda.so.1
	}{
		{"ldconfig-newer", request.CompatLdconfig, compatRootfs("570.86.10"), request.CompatLdconfig, true, []string{dir}, nil, "libcuda.so." + ver},
		{"default-newer", request.CompatDefault, compatRootfs("570.86.10"), request.CompatLdconfig, true, []string{dir}, nil, "libcuda.so." + ver},
		{"ldconfig-older", request.CompatLdconfig, compatRootfs("535.161.08"), request.CompatLdconfig, false, nil, nil, "libcuda.so." + ver},
		{"ldconfig-same", request.CompatLdconfig, compatRootfs("550.127.05"), request.CompatLdconfig, false, nil, nil, "libcuda.so." + ver},
		{"ldconfig-1000", request.CompatLdconfig, compatRootfs("1000.1.1"), request.CompatLdconfig, true, []string{dir}, nil, "libcuda.so." + ver},
		{"mount-newer", request.CompatMount, compatRootfs("570.86.10"), request.CompatMount, true, nil,
			[]string{"libcuda.so.570.86.10", "libnvidia-ptxjitcompiler.so.570.86.10"}, "libcuda.so.570.86.10"},
		{"mount-older", request.CompatMount, compatRootfs("535.161.08"), request.CompatMount, true, nil,
			[]string{"libcuda.so.535.161.08", "libnvidia-ptxjitcompiler.so.535.161.08"}, "libcuda.so." + ver},
		{"mount-same", request.CompatMount, compatRootfs("550.127.05"), request.CompatMount, false, nil, nil, "libcuda.so." + ver},
		{"disabled", request.CompatDisabled, compatRootfs("570.86.10"), request.CompatDisabled, false, nil, nil, "libcuda.so." + ver},
		{"no-compat-dir", request.CompatLdconfig, debianRootfs, request.CompatLdconfig, false, nil, nil, "libcuda.so." + ver},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := h.plan(t, compatRequest(tc.mode), tc.spec, nil)
			c := p.CUDACompat
			assert.Equal(t, tc.wantMode, c.Mode, "compat %+v", c)
			assert.Equal(t, tc.used, c.Used, "compat %+v", c)
			assert.NotEmpty(t, c.Reason, "compat %+v", c)
			assert.Equal(t, tc.firstDirs, p.LDCache.FirstDirs, "first dirs")
			var mounted []string
			for _, m := range p.Mounts {
				if m.Kind == nvcontainer.MountCompat {
					mounted = append(mounted, filepath.Base(m.Target))
					want := filepath.Join(p.Container.Rootfs, dir, filepath.Base(m.Target))
					assert.Equal(t, want, m.Source, "compat mount %+v: source", m)
					assert.Equal(t, p.Layout.LibDir, filepath.Dir(m.Target), "compat mount %+v: not in the library dir", m)
				}
			}
			assert.Equal(t, tc.mounted, mounted, "mounted from the image")
			got, _ := findLink(p, deb+"libcuda.so.1")
			assert.Equal(t, tc.libcuda1, got, "libcuda.so.1 ->")
			checkInvariants(t, h, p)
		})
	}
}

// TestPlanCompatConsidered checks which image files count as compat
// libraries: lib*.so.* resolved inside the rootfs to regular files,
// deduplicated.
func TestPlanCompatConsidered(t *testing.T) {
	h := newTestHost(t, nil)
	p := h.plan(t, compatRequest(request.CompatLdconfig), compatRootfs("570.86.10")+`
fifo    usr/local/cuda-12.8/compat/libfifo.so.999
symlink usr/local/cuda-12.8/compat/libdangling.so.999 /nowhere/libx.so.999
dir     usr/local/cuda-12.8/compat/libdir.so.999
`, nil)
	want := []string{"/usr/local/cuda-12.8/compat/libcuda.so.570.86.10", "/usr/local/cuda-12.8/compat/libnvidia-ptxjitcompiler.so.570.86.10"}
	assert.Equal(t, want, p.CUDACompat.Libraries, "considered in %q", p.CUDACompat.Dir)
	assert.Equal(t, "/usr/local/cuda-12.8/compat", p.CUDACompat.Dir, "considered %q in", p.CUDACompat.Libraries)
	assert.Contains(t, p.CUDACompat.Reason, "libcuda.so.570.86.10", "reason")
	for _, caps := range []capabilities.Set{capabilities.Of(capabilities.Utility), capabilities.Of(capabilities.Graphics)} {
		t.Run(caps.String(), func(t *testing.T) {
			p := h.plan(t, capsRequest(caps), compatRootfs("570.86.10"), nil)
			assert.False(t, p.CUDACompat.Used, "%s: compat considered without compute: %+v", caps, p.CUDACompat)
			assert.Empty(t, p.CUDACompat.Libraries, "%s: compat considered without compute: %+v", caps, p.CUDACompat)
		})
	}
	req := capsRequest(capabilities.Of(capabilities.Video)) // video brings compute's libraries
	p = h.plan(t, req, compatRootfs("570.86.10"), nil)
	assert.True(t, p.CUDACompat.Used, "video: compat not used: %+v", p.CUDACompat)
}

// TestPlanCompatTwoDirs refuses compat libraries that resolve into two
// directories in ldconfig mode, as nvidia-container-cli does.
func TestPlanCompatTwoDirs(t *testing.T) {
	h := newTestHost(t, nil)
	spec := debianRootfs + `
file    opt/other/libcuda.so.570.86.10 "ELF"
file    usr/local/cuda/compat/libnvidia-nvvm.so.570.86.10 "ELF"
symlink usr/local/cuda/compat/libcuda.so.570.86.10 /opt/other/libcuda.so.570.86.10
`
	rootfs := testutil.Tree(t, spec)
	_, err := nvcontainer.NewPlan(h.host, compatRequest(request.CompatLdconfig), nvcontainer.Container{Rootfs: rootfs}, nil)
	want := `container error: deciding CUDA compat in rootfs "` + rootfs + `": compat libraries in more than one directory ("/opt/other", "/usr/local/cuda/compat")`
	assert.EqualError(t, err, want, "ldconfig mode")
	_, err = nvcontainer.NewPlan(h.host, compatRequest(request.CompatMount), nvcontainer.Container{Rootfs: rootfs}, nil)
	assert.NoError(t, err, "mount mode")
}
