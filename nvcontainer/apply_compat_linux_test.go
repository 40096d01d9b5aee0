package nvcontainer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// compatLib is a CUDA forward-compatibility libcuda newer than the test
// host's driver (550.54.15), as NVIDIA's cuda-compat packages ship it.
const (
	compatDir = "usr/local/cuda/compat"
	compatLib = "libcuda.so.560.28.03"
)

// startCompat starts a container whose image has compatLib in compatDir,
// pivoted or as an OCI hook sees it. The library ends in tag, so that each
// container's copy is its own.
func startCompat(t *testing.T, pivot bool, tag string) *container.Container {
	t.Helper()
	dir := newRootfs(t, fedoraLayout)
	testutil.BuildTree(t, dir, "symlink "+compatDir+"/libcuda.so.1 "+compatLib)
	file := filepath.Join(dir, compatDir, compatLib)
	if err := elfwriter.WriteFile(file, elfwriter.Library("libcuda.so.1", "libc.so.6"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("\x00" + tag)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return container.Start(t, &container.Options{Rootfs: dir, PivotRoot: pivot})
}

// compatMountPlan plans compute in CUDA compat mount mode for c, whose
// rootfs NewPlan inspects through /proc/PID/root.
func compatMountPlan(t *testing.T, h *testHost, c *container.Container) *Plan {
	t.Helper()
	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"})
	if err != nil {
		t.Fatal(err)
	}
	req.CUDACompatMode = request.CompatMount
	p, err := NewPlan(h.host, req, ctrOf(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.CUDACompat.Used || !hasMount(p, fedoraLayout.LibDir, "/"+compatLib) {
		t.Fatalf("the plan does not mount the compat library: %+v", p.CUDACompat)
	}
	return p
}

// TestApplyCompatMount: in CUDA compat mount mode, the image's compat
// library is mounted into the library dir from inside the container it is
// applied to (its own file, read-only; the plan was made on a template
// container of the same layout), for a hook-time and a pivoted container,
// with both mount methods, and libcuda.so.1 then leads the loader to it.
func TestApplyCompatMount(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	p := compatMountPlan(t, h, startCompat(t, false, "template"))
	for _, tc := range []struct {
		name          string
		pivot, legacy bool
	}{{"hook", false, false}, {"pivoted", true, false}, {"hook/legacy", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCompat(t, tc.pivot, tc.name)
			before := c.MountInfo(t)
			if err := p.Apply(context.Background(), ctrOf(c), &ApplyOptions{LegacyMounts: tc.legacy}); err != nil {
				t.Fatal(err)
			}
			checkMountsInside(t, c, before, mountCount(p))
			target := fedoraLayout.LibDir + "/" + compatLib
			if m := c.MountAt(t, target); m == nil || !strings.Contains(","+m.Options+",", ",ro,") {
				t.Errorf("%s: mounted %+v, want the compat library read-only", target, m)
			}
			want := readFile(t, c.Path(compatDir+"/"+compatLib))
			if got := readFile(t, c.Path(target)); got != want {
				t.Errorf("%s does not hold the image's compat library", target)
			}
			out, err := c.Exec(t, "sh", "-c", "LD_DEBUG=libs chroot "+c.Rootfs+" "+cudaProg+" 2>&1; echo rc=$?")
			if err != nil || !strings.Contains(out, "rc=0") || !strings.Contains(out, "/usr/lib64/libcuda.so.1") {
				t.Errorf("the loader did not load libcuda.so.1 from the library dir (%v):\n%s", err, out)
			}
			if got, _ := os.Readlink(c.Path(fedoraLayout.LibDir + "/libcuda.so.1")); got != compatLib {
				t.Errorf("libcuda.so.1 -> %q, want the newer compat library %s", got, compatLib)
			}
		})
	}
}

// TestApplyCompatSwap is the CVE-2024-0132 / CVE-2025-23359 race: between
// NewPlan and Apply the image swaps its compat dir (or the library) for a
// symlink to a host dir holding a secret under the library's name. Apply
// opens the library inside the rootfs, so it fails and mounts nothing; no
// host file becomes visible in the container.
func TestApplyCompatSwap(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	secret := testutil.RootTree(t, decoySpec+"file "+compatLib+" \"HOST SECRET\"\nfile compat/"+compatLib+" \"HOST SECRET\"\n")
	up := strings.Repeat("../", 24)
	for _, tc := range []struct{ name, remove, spec string }{
		{"dir-abs", compatDir, "symlink " + compatDir + " " + secret},
		{"dir-dotdot", compatDir, "symlink " + compatDir + " " + up + secret[1:]},
		{"cuda-abs", "usr/local/cuda", "symlink usr/local/cuda " + secret},
		{"lib-abs", compatDir + "/" + compatLib, "symlink " + compatDir + "/" + compatLib + " " + secret + "/" + compatLib},
		{"lib-fifo", compatDir + "/" + compatLib, "fifo " + compatDir + "/" + compatLib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCompat(t, false, tc.name)
			p := compatMountPlan(t, h, c)
			if err := os.RemoveAll(c.Path(tc.remove)); err != nil {
				t.Fatal(err)
			}
			testutil.BuildTree(t, c.HostRootfs, tc.spec)
			err := applyHostileWith(t, h, c, secret, func() error {
				return p.Apply(context.Background(), ctrOf(c), nil)
			})
			if err == nil {
				t.Error("Apply succeeded after the swap, want an error")
			}
			if data, _ := os.ReadFile(c.Path(fedoraLayout.LibDir + "/" + compatLib)); strings.Contains(string(data), "HOST SECRET") {
				t.Error("the container reads the host's secret")
			}
		})
	}
}
