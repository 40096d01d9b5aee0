package nvcontainer

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validPlan() *Plan {
	return &Plan{
		Version: PlanVersion,
		Tmpfs: []Tmpfs{{Target: "/proc/driver/nvidia", Options: []string{"nosuid"},
			Files:  []TmpfsFile{{Name: "params", Content: "x"}},
			Mounts: []Mount{{Kind: MountProc, Source: "/proc/driver/nvidia/gpus/0000:07:00.0", Target: "/proc/driver/nvidia/gpus/0000:07:00.0", Dir: true}}}},
		Mounts: []Mount{
			{Kind: MountLibrary, Source: "/usr/lib64/libcuda.so.550.54.15", Target: "/usr/lib64/libcuda.so.550.54.15", Options: []string{"ro", "nosuid", "nodev"}},
			{Kind: MountDevice, Source: "/dev/nvidia0", Target: "/dev/nvidia0", Options: []string{"ro", "nosuid", "noexec"}, Device: &DeviceNumber{Major: 195}},
		},
		Symlinks:    []Symlink{{Path: "/usr/lib64/libcuda.so", Target: "libcuda.so.1"}},
		CgroupRules: []DeviceRule{{Type: "c", Major: 195, Access: "rw"}},
	}
}

func TestCheckPlan(t *testing.T) {
	ctr := Container{PID: 1, Rootfs: "/rootfs"}
	require.Nil(t, checkPlan(validPlan(), ctr), "valid plan")
	for _, tc := range []struct {
		name  string
		edit  func(*Plan, *Container)
		is    error
		words string
	}{
		{"nil", nil, ErrInvalidPlan, "nil plan"},
		{"version", func(p *Plan, _ *Container) { p.Version = 2 }, ErrInvalidPlan, "plan version 2"},
		{"no rootfs", func(_ *Plan, c *Container) { c.Rootfs = "" }, ErrInvalidPlan, "need a rootfs"},
		{"negative pid", func(_ *Plan, c *Container) { c.PID = -1 }, ErrInvalidPID, "container pid -1: out of range"},
		{"pid 0", func(_ *Plan, c *Container) { c.PID = 0 }, ErrInvalidPID, "container pid 0: names no process"},
		{"pid 0 standalone", func(_ *Plan, c *Container) { c.PID, c.Mode = 0, ModeStandalone }, ErrInvalidPID, "container pid 0"},
		{"pid beyond PID_MAX_LIMIT", func(_ *Plan, c *Container) { c.PID = 1<<22 + 1 }, ErrInvalidPID, "container pid 4194305: out of range"},
		{"pid beyond int32", func(_ *Plan, c *Container) { c.PID = 1 << 40 }, ErrInvalidPID, "container pid 1099511627776"},
		{"rootfs-only with a pid", func(_ *Plan, c *Container) { c.Mode = ModeRootfsOnly }, ErrInvalidPID, "container pid 1: rootfs-only mode takes no process"},
		{"unknown mode", func(_ *Plan, c *Container) { c.Mode = "host" }, ErrInvalidPlan, `container mode "host"`},
		{"rules without process", func(_ *Plan, c *Container) { c.PID, c.Mode = 0, ModeRootfsOnly }, ErrNoProcess, "1 device cgroup rules"},
		{"unknown option", func(p *Plan, _ *Container) { p.Mounts[0].Options = []string{"ro", "suid"} }, ErrInvalidPlan, `unknown mount option "suid"`},
		{"tmpfs option", func(p *Plan, _ *Container) { p.Tmpfs[0].Options = []string{"exec"} }, ErrInvalidPlan, `"exec"`},
		{"relative source", func(p *Plan, _ *Container) { p.Mounts[0].Source = "lib/x" }, ErrInvalidPlan, "not an absolute host path"},
		{"root target", func(p *Plan, _ *Container) { p.Mounts[0].Target = "/../.." }, ErrInvalidPlan, "names no entry"},
		{"empty target", func(p *Plan, _ *Container) { p.Mounts[0].Target = "" }, ErrInvalidPlan, "names no entry"},
		{"device without number", func(p *Plan, _ *Container) { p.Mounts[1].Device = nil }, ErrInvalidPlan, "device number"},
		{"mount outside tmpfs", func(p *Plan, _ *Container) { p.Tmpfs[0].Mounts[0].Target = "/proc/driver/other" }, ErrInvalidPlan, "not below its tmpfs"},
		{"tmpfs file escapes", func(p *Plan, _ *Container) { p.Tmpfs[0].Files[0].Name = "../params" }, ErrInvalidPlan, "not below the tmpfs"},
		{"empty symlink", func(p *Plan, _ *Container) { p.Symlinks[0].Target = "" }, ErrInvalidPlan, "symlink"},
		{"rule type", func(p *Plan, _ *Container) { p.CgroupRules[0].Type = "a" }, ErrInvalidPlan, "rule"},
		{"rule access", func(p *Plan, _ *Container) { p.CgroupRules[0].Access = "rwx" }, ErrInvalidPlan, "rule"},
		{"compat outside the rootfs", func(p *Plan, _ *Container) {
			p.Container.Rootfs = "/planned"
			p.Mounts[0].Kind, p.Mounts[0].Source = MountCompat, "/elsewhere/libcuda.so.560"
		}, ErrInvalidPlan, "no path inside the rootfs"},
		{"compat relative image path", func(p *Plan, _ *Container) {
			p.Mounts[0].Kind, p.Mounts[0].ImagePath = MountCompat, "usr/local/cuda/compat/libcuda.so.560"
		}, ErrInvalidPlan, "no path inside the rootfs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p *Plan
			c := ctr
			if tc.edit != nil {
				p = validPlan()
				tc.edit(p, &c)
			}
			err := checkPlan(p, c)
			require.NotNil(t, err, "checkPlan, want a check error matching %v and saying %q", tc.is, tc.words)
			assert.ErrorIs(t, err, tc.is, "checkPlan")
			assert.Equal(t, StepCheck, err.Step, "checkPlan = %v, want a check error", err)
			assert.ErrorContains(t, err, tc.words, "checkPlan")
		})
	}
}

func TestApplyErrorText(t *testing.T) {
	e := &ApplyError{Step: StepMount, Path: "/usr/bin/nvidia-smi", Err: fs.ErrExist, kind: ErrWrongType}
	assert.EqualError(t, e, `applying plan: mount "/usr/bin/nvidia-smi": file already exists`, "Error()")
	assert.ErrorIs(t, e, ErrWrongType, "Is does not match the kind")
	assert.ErrorIs(t, e, fs.ErrExist, "Is does not match the cause")
	assert.NotErrorIs(t, e, ErrInvalidPlan, "Is matches another sentinel")
	e.UndoErr = errors.New("detaching: busy")
	assert.True(t, strings.HasSuffix(e.Error(), " (undoing: detaching: busy)"), "Error() with an undo error = %q", e.Error())
	assert.EqualError(t, &ApplyError{Step: StepCommit, Err: errors.New("x")}, "applying plan: commit: x", "Error() without a path")
}

// TestImagePath: a cuda-compat mount's path inside the rootfs is its
// ImagePath or, in a plan from before that field, its Source below the
// planned rootfs.
func TestImagePath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rootfs string
		m      Mount
		want   string
		ok     bool
	}{
		{"image path", "/r", Mount{Source: "/r/usr/local/cuda/compat/libcuda.so.560", ImagePath: "/opt/compat/libcuda.so.560"}, "/opt/compat/libcuda.so.560", true},
		{"source below rootfs with slash", "/r/", Mount{Source: "/r/usr/local/cuda/compat/libcuda.so.560"}, "/usr/local/cuda/compat/libcuda.so.560", true},
		{"rootfs is root", "/", Mount{Source: "/usr/local/cuda/compat/libcuda.so.560"}, "/usr/local/cuda/compat/libcuda.so.560", true},
		{"source outside rootfs", "/r", Mount{Source: "/rr/libcuda.so.560"}, "", false},
		{"no rootfs", "", Mount{Source: "/libcuda.so.560"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{Container: Container{Rootfs: tc.rootfs}}
			got, ok := p.imagePath(tc.m)
			require.Equal(t, tc.ok, ok, "imagePath(%q, %+v) = %q, ok", tc.rootfs, tc.m, got)
			if ok {
				assert.Equal(t, tc.want, got, "imagePath(%q, %+v)", tc.rootfs, tc.m)
			}
		})
	}
}
