package nvcontainer_test

import (
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer"
)

const (
	deb   = "/usr/lib/x86_64-linux-gnu/"
	deb32 = "/usr/lib/i386-linux-gnu/"
	ver   = "550.54.15"
	appRC = "/etc/nvidia/nvidia-application-profiles-rc.d"
)

// TestPlanCapabilities checks, per capability set, which mounts, links,
// tmpfs and cgroup rules a plan for all eight GPUs of a DGX A100 in a
// Debian rootfs holds (libnvidia-container's library lists).
func TestPlanCapabilities(t *testing.T) {
	h := newTestHost(t, nil)
	for _, tc := range []struct {
		caps          capabilities.Set
		want, notWant []string // mount targets
		links, noLink []string // symlink paths
		rules         [][2]uint32
		noRules       [][2]uint32
		appProfile    bool
	}{
		{
			caps: capabilities.Of(capabilities.Utility),
			want: []string{"/usr/bin/nvidia-smi", deb + "libnvidia-ml.so." + ver, "/run/nvidia-persistenced/socket",
				"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia7", "/lib/firmware/nvidia/" + ver + "/gsp_ga10x.bin"},
			notWant: []string{deb + "libcuda.so." + ver, "/dev/nvidia-uvm", "/dev/nvidia-modeset", "/tmp/nvidia-mps",
				"/usr/bin/nvidia-cuda-mps-control", deb32 + "libnvidia-ml.so." + ver, "/etc/OpenCL/vendors/nvidia.icd"},
			links:   []string{deb + "libnvidia-ml.so.1"},
			noLink:  []string{deb + "libcuda.so", deb + "libcuda.so.1"},
			rules:   [][2]uint32{{195, 255}, {195, 0}, {195, 7}},
			noRules: [][2]uint32{{510, 0}, {195, 254}},
		},
		{
			caps: capabilities.Of(capabilities.Compute),
			want: []string{deb + "libcuda.so." + ver, deb + "libnvidia-ptxjitcompiler.so." + ver, "/usr/bin/nvidia-cuda-mps-control",
				"/tmp/nvidia-mps", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/etc/OpenCL/vendors/nvidia.icd"},
			notWant: []string{"/usr/bin/nvidia-smi", deb + "libnvidia-ml.so." + ver, "/run/nvidia-persistenced/socket", "/dev/nvidia-modeset"},
			links:   []string{deb + "libcuda.so", deb + "libcuda.so.1"},
			noLink:  []string{deb + "gbm/nvidia-drm_gbm.so"},
			rules:   [][2]uint32{{195, 255}, {510, 0}, {510, 1}},
		},
		{
			// video brings compute's libraries and nodes, not its binaries.
			caps:    capabilities.Of(capabilities.Video),
			want:    []string{deb + "libnvcuvid.so." + ver, deb + "libnvidia-opticalflow.so." + ver, deb + "libcuda.so." + ver, "/dev/nvidia-uvm", "/tmp/nvidia-mps"},
			notWant: []string{"/usr/bin/nvidia-cuda-mps-control"},
			links:   []string{deb + "libnvidia-opticalflow.so", deb + "libcuda.so"},
			rules:   [][2]uint32{{510, 0}},
		},
		{
			caps:       capabilities.Of(capabilities.Graphics),
			want:       []string{deb + "libGLX_nvidia.so." + ver, deb + "libnvidia-glcore.so." + ver, "/etc/vulkan/icd.d/nvidia_icd.json"},
			notWant:    []string{deb + "libcuda.so." + ver, "/dev/nvidia-uvm", "/dev/nvidia-modeset"},
			links:      []string{deb + "libGLX_indirect.so.0", deb + "libGLX_nvidia.so.0"},
			noLink:     []string{deb + "gbm/nvidia-drm_gbm.so"}, // the allocator comes with compute
			noRules:    [][2]uint32{{510, 0}, {195, 254}},
			appProfile: true,
		},
		{
			caps:       capabilities.Of(capabilities.Graphics, capabilities.Compute),
			links:      []string{deb + "gbm/nvidia-drm_gbm.so"},
			appProfile: true,
		},
		{
			// display brings graphics' libraries and the modeset node.
			caps:       capabilities.Of(capabilities.Display),
			want:       []string{deb + "libGLX_nvidia.so." + ver, "/dev/nvidia-modeset", "/usr/lib/xorg/modules/drivers/nvidia_drv.so"},
			rules:      [][2]uint32{{195, 254}},
			appProfile: true,
		},
		{
			caps:    capabilities.Of(capabilities.NGX),
			want:    []string{deb + "libnvidia-ngx.so." + ver},
			notWant: []string{deb + "libcuda.so." + ver},
		},
		{
			caps:    capabilities.Of(capabilities.Compute, capabilities.Compat32),
			want:    []string{deb32 + "libcuda.so." + ver, deb + "libcuda.so." + ver},
			links:   []string{deb32 + "libcuda.so.1", deb32 + "libcuda.so"},
			notWant: []string{deb32 + "libnvidia-ml.so." + ver},
		},
	} {
		t.Run(tc.caps.String(), func(t *testing.T) {
			p := h.plan(t, capsRequest(tc.caps), debianRootfs, nil)
			for _, target := range tc.want {
				_, ok := findMount(p, target)
				assert.True(t, ok, "no mount at %s", target)
			}
			for _, target := range tc.notWant {
				_, ok := findMount(p, target)
				assert.False(t, ok, "unexpected mount at %s", target)
			}
			for _, l := range tc.links {
				_, ok := findLink(p, l)
				assert.True(t, ok, "no symlink %s", l)
			}
			for _, l := range tc.noLink {
				target, ok := findLink(p, l)
				assert.False(t, ok, "unexpected symlink %s -> %s", l, target)
			}
			for _, r := range tc.rules {
				assert.True(t, hasRule(p, r[0], r[1]), "no cgroup rule for %d:%d", r[0], r[1])
			}
			for _, r := range tc.noRules {
				assert.False(t, hasRule(p, r[0], r[1]), "unexpected cgroup rule for %d:%d", r[0], r[1])
			}
			_, ok := findTmpfs(p, appRC)
			assert.Equal(t, tc.appProfile, ok, "application profile tmpfs")
			checkInvariants(t, h, p)
		})
	}
}

// checkInvariants checks what every plan must satisfy: each kind's flags,
// sources that exist on the host and are not symlinks, device numbers
// that match the host's nodes, one rule per device node, libraries
// flattened into the layout's dirs, and the procfs mask.
func checkInvariants(t *testing.T, h *testHost, p *nvcontainer.Plan) {
	t.Helper()
	want := map[nvcontainer.MountKind]string{
		nvcontainer.MountLibrary: "ro,nosuid,nodev", nvcontainer.MountLibrary32: "ro,nosuid,nodev",
		nvcontainer.MountBinary: "ro,nosuid,nodev", nvcontainer.MountFirmware: "ro,nosuid,nodev",
		nvcontainer.MountConfig: "ro,nosuid,nodev", nvcontainer.MountCompat: "ro,nosuid,nodev",
		nvcontainer.MountIPC: "nosuid,nodev,noexec", nvcontainer.MountDevice: "ro,nosuid,noexec",
		nvcontainer.MountProc: "ro,nosuid,nodev,noexec", nvcontainer.MountCapsDir: "nosuid,noexec",
	}
	all := slices.Clone(p.Mounts)
	for _, tf := range p.Tmpfs {
		all = append(all, tf.Mounts...)
		assert.Equal(t, uint32(0o555), tf.Mode, "tmpfs %s: mode %o", tf.Target, tf.Mode)
		assert.Equal(t, "nosuid,nodev,noexec", strings.Join(tf.Options, ","), "tmpfs %s: options", tf.Target)
	}
	seen := map[string]bool{}
	for _, m := range all {
		assert.Equal(t, want[m.Kind], strings.Join(m.Options, ","), "%s mount %s: options", m.Kind, m.Target)
		assert.False(t, seen[m.Target], "two mounts at %s", m.Target)
		seen[m.Target] = true
		checkSource(t, h, p, m)
	}
	checkLibraryDirs(t, p)
}

func checkSource(t *testing.T, h *testHost, p *nvcontainer.Plan, m nvcontainer.Mount) {
	t.Helper()
	st, err := os.Lstat(m.Source)
	if assert.NoError(t, err, "%s mount %s: source %s", m.Kind, m.Target, m.Source) {
		assert.Zero(t, st.Mode()&os.ModeSymlink, "%s mount %s: source %s is a symlink", m.Kind, m.Target, m.Source)
		assert.Equal(t, m.Dir, st.IsDir(), "%s mount %s: source %s: is a dir (want dir %v)", m.Kind, m.Target, m.Source, m.Dir)
	}
	inHost := strings.HasPrefix(m.Source, h.fake.Root+"/")
	inRootfs := p.Container.Rootfs != "" && strings.HasPrefix(m.Source, p.Container.Rootfs+"/")
	assert.True(t, inHost || (m.Kind == nvcontainer.MountCompat && inRootfs), "%s mount %s: source %s outside the host and rootfs", m.Kind, m.Target, m.Source)
	assert.Equal(t, m.Kind == nvcontainer.MountDevice, m.Device != nil, "%s mount %s: device %v", m.Kind, m.Target, m.Device)
	if m.Device != nil {
		assert.True(t, hasRule(p, m.Device.Major, m.Device.Minor), "device %s (%d:%d) has no cgroup rule", m.Target, m.Device.Major, m.Device.Minor)
	}
}

func checkLibraryDirs(t *testing.T, p *nvcontainer.Plan) {
	t.Helper()
	for _, m := range p.Mounts {
		dir := map[nvcontainer.MountKind]string{nvcontainer.MountLibrary: p.Layout.LibDir,
			nvcontainer.MountLibrary32: p.Layout.Lib32Dir, nvcontainer.MountBinary: p.Layout.BinDir}[m.Kind]
		if dir != "" && !p.Layout.HostPaths {
			assert.Equal(t, dir, path.Dir(m.Target), "%s %s not in %s", m.Kind, m.Target, dir)
		}
		if m.Kind == nvcontainer.MountLibrary || m.Kind == nvcontainer.MountLibrary32 {
			assert.Equal(t, path.Base(m.Source), path.Base(m.Target), "library %s mounted under another name than its source %s", m.Target, m.Source)
		}
	}
}

// TestPlanProcfs checks the /proc/driver/nvidia mask: copies of the host's
// files with ModifyDeviceFiles forced to 0 and their modes, and binds of
// only the selected GPUs' directories.
func TestPlanProcfs(t *testing.T) {
	h := newTestHost(t, nil)
	p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES=2,5", "NVIDIA_DRIVER_CAPABILITIES=utility"), debianRootfs, nil)
	proc, ok := findTmpfs(p, "/proc/driver/nvidia")
	require.True(t, ok, "no /proc/driver/nvidia tmpfs: %+v", p.Tmpfs)
	require.Equal(t, "/proc/driver/nvidia", p.Tmpfs[0].Target, "no /proc/driver/nvidia tmpfs first: %+v", p.Tmpfs)
	var names []string
	for _, f := range proc.Files {
		names = append(names, f.Name)
		host, err := os.ReadFile(path.Join(h.fake.ProcRoot, "driver/nvidia", f.Name))
		require.NoError(t, err)
		want := strings.Replace(string(host), "ModifyDeviceFiles: 1", "ModifyDeviceFiles: 0", 1)
		assert.Equal(t, want, f.Content, "%s: content differs from the host's (ModifyDeviceFiles rewritten)", f.Name)
		st, _ := os.Stat(path.Join(h.fake.ProcRoot, "driver/nvidia", f.Name))
		assert.Equal(t, uint32(st.Mode().Perm()), f.Mode, "%s: mode %o, host %o", f.Name, f.Mode, st.Mode().Perm())
	}
	assert.Equal(t, "params,version,registry", strings.Join(names, ","), "files")
	assert.Contains(t, proc.Files[0].Content, "ModifyDeviceFiles: 0\n", "params not sanitised")
	assert.NotContains(t, proc.Files[0].Content, "ModifyDeviceFiles: 1", "params not sanitised")
	var binds []string
	for _, m := range proc.Mounts {
		binds = append(binds, m.Target+"@"+m.For)
	}
	want := []string{"/proc/driver/nvidia/gpus/0000:47:00.0@2", "/proc/driver/nvidia/gpus/0000:90:00.0@5"}
	assert.Equal(t, want, binds, "gpu binds")
}

// TestPlanAppProfile checks the EGL mask of the selected GPUs' minors.
func TestPlanAppProfile(t *testing.T) {
	h := newTestHost(t, nil)
	for _, tc := range []struct{ devices, mask string }{
		{"0,3", "0x9"}, {"all", "0xff"}, {"7", "0x80"}, {"none", ""},
	} {
		t.Run(tc.devices, func(t *testing.T) {
			p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES="+tc.devices, "NVIDIA_DRIVER_CAPABILITIES=graphics"), debianRootfs, nil)
			rc, ok := findTmpfs(p, appRC)
			require.True(t, ok, "%s: no app profile tmpfs", tc.devices)
			if tc.mask == "" {
				assert.Empty(t, rc.Files, "%s: files", tc.devices)
				return
			}
			want := `{ "profiles": [{"name": "_container_", "settings": ["EGLVisibleDGPUDevices", ` + tc.mask +
				`]}], "rules": [{"pattern": [], "profile": "_container_"}]}`
			assert.Equal(t, []nvcontainer.TmpfsFile{{Name: "10-container.conf", Mode: 0o555, Content: want}}, rc.Files, tc.devices)
		})
	}
}

// TestPlanWarnings carries the driver's missing-file warnings and warns
// about a missing procfs file, which is left out of the mask.
func TestPlanWarnings(t *testing.T) {
	h := newTestHost(t, nil)
	require.NoError(t, os.Remove(path.Join(h.fake.ProcRoot, "driver/nvidia/registry")))
	p := h.plan(t, capsRequest(capabilities.Of(capabilities.Video)), debianRootfs, nil)
	for _, w := range []string{"missing library libvdpau_nvidia.so", "missing procfs file /proc/driver/nvidia/registry"} {
		assert.Contains(t, p.Warnings, w, "no warning %q", w)
	}
	require.NotEmpty(t, p.Warnings)
	assert.Equal(t, "missing library libvdpau_nvidia.so", p.Warnings[0], "driver warnings not first: %q", p.Warnings)
	proc, _ := findTmpfs(p, "/proc/driver/nvidia")
	if assert.Len(t, proc.Files, 2, "mask files %+v", proc.Files) {
		assert.Equal(t, "version", proc.Files[1].Name, "mask files %+v", proc.Files)
	}
}
