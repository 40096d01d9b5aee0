package nvcontainer_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
			if c.Mode != tc.wantMode || c.Used != tc.used || c.Reason == "" {
				t.Errorf("compat %+v", c)
			}
			if !slices.Equal(p.LDCache.FirstDirs, tc.firstDirs) {
				t.Errorf("first dirs %v, want %v", p.LDCache.FirstDirs, tc.firstDirs)
			}
			var mounted []string
			for _, m := range p.Mounts {
				if m.Kind == nvcontainer.MountCompat {
					mounted = append(mounted, filepath.Base(m.Target))
					if want := filepath.Join(p.Container.Rootfs, dir, filepath.Base(m.Target)); m.Source != want || filepath.Dir(m.Target) != p.Layout.LibDir {
						t.Errorf("compat mount %+v, want source %s", m, want)
					}
				}
			}
			if !slices.Equal(mounted, tc.mounted) {
				t.Errorf("mounted from the image %v, want %v", mounted, tc.mounted)
			}
			if got, _ := findLink(p, deb+"libcuda.so.1"); got != tc.libcuda1 {
				t.Errorf("libcuda.so.1 -> %q, want %q", got, tc.libcuda1)
			}
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
	if !slices.Equal(p.CUDACompat.Libraries, want) || p.CUDACompat.Dir != "/usr/local/cuda-12.8/compat" {
		t.Errorf("considered %q in %q", p.CUDACompat.Libraries, p.CUDACompat.Dir)
	}
	if !strings.Contains(p.CUDACompat.Reason, "libcuda.so.570.86.10") {
		t.Errorf("reason %q", p.CUDACompat.Reason)
	}
	for _, caps := range []capabilities.Set{capabilities.Of(capabilities.Utility), capabilities.Of(capabilities.Graphics)} {
		req := capsRequest(caps)
		if p := h.plan(t, req, compatRootfs("570.86.10"), nil); p.CUDACompat.Used || len(p.CUDACompat.Libraries) != 0 {
			t.Errorf("%s: compat considered without compute: %+v", caps, p.CUDACompat)
		}
	}
	req := capsRequest(capabilities.Of(capabilities.Video)) // video brings compute's libraries
	if p := h.plan(t, req, compatRootfs("570.86.10"), nil); !p.CUDACompat.Used {
		t.Errorf("video: compat not used: %+v", p.CUDACompat)
	}
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
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := nvcontainer.NewPlan(h.host, compatRequest(request.CompatMount), nvcontainer.Container{Rootfs: rootfs}, nil); err != nil {
		t.Errorf("mount mode: %v", err)
	}
}
