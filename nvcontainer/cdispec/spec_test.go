package cdispec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	oci "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"tags.cncf.io/container-device-interface/pkg/cdi"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

func fromHost(t *testing.T, h *testHost, opts *cdispec.Options) *specs.Spec {
	t.Helper()
	spec, err := cdispec.FromHost(h.host, capabilities.All, opts)
	require.NoError(t, err, "FromHost")
	return spec
}

func deviceNames(spec *specs.Spec) []string {
	var names []string
	for _, d := range spec.Devices {
		names = append(names, d.Name)
	}
	return names
}

func cdiDevice(spec *specs.Spec, name string) *specs.Device {
	for i := range spec.Devices {
		if spec.Devices[i].Name == name {
			return &spec.Devices[i]
		}
	}
	return nil
}

func nodePaths(e specs.ContainerEdits) []string {
	var out []string
	for _, n := range e.DeviceNodes {
		out = append(out, n.Path)
	}
	return out
}

// allStrategies names every device by index, UUID and type-index.
var allStrategies = &cdispec.Options{NameStrategies: []cdispec.NameStrategy{
	cdispec.NameIndex, cdispec.NameUUID, cdispec.NameTypeIndex}}

// writeSpec writes spec in both encodings into a new CDI spec dir and
// loads each file with the CDI module's ReadSpec, which validates it as
// a runtime does.
func writeSpec(t *testing.T, spec *specs.Spec) string {
	t.Helper()
	dir := t.TempDir()
	for _, format := range []string{cdispec.FormatYAML, cdispec.FormatJSON} {
		b, err := cdispec.Marshal(spec, format)
		require.NoError(t, err, "Marshal %s", format)
		file := filepath.Join(dir, "nvidia."+format)
		if format == cdispec.FormatJSON {
			file = filepath.Join(t.TempDir(), "nvidia.json") // one spec per dir: same kind twice is a conflict
		}
		require.NoError(t, os.WriteFile(file, b, 0o644))
		_, err = cdi.ReadSpec(file, 0)
		assert.NoError(t, err, "CDI module refuses the %s spec", format)
	}
	return dir
}

// TestCDISpecDGX checks a spec for the eight GPUs of a DGX A100: it
// loads with the CDI module, names devices per strategy in sorted order,
// and injecting device 0 through a CDI cache (as podman does) gives the
// container /dev/nvidia0 with its DRM nodes, the shared nodes, the driver
// files, the spec-wide hooks and device 0's by-path links hook, each with
// an explicit environment.
func TestCDISpecDGX(t *testing.T) {
	h := newTestHost(t, nil)
	spec := fromHost(t, h, allStrategies)
	assert.Equal(t, "0.5.0", spec.Version, "version")
	assert.Equal(t, "nvidia.com/gpu", spec.Kind, "kind")
	names := deviceNames(spec)
	require.Len(t, names, 8*3+1, "names %q", names)
	assert.IsNonDecreasing(t, names, "names sorted")
	assert.Equal(t, "0", names[0])
	assert.Equal(t, "gpu7", names[len(names)-1])
	assert.Contains(t, names, "all")
	assert.Contains(t, names, h.host.Devices.GPUs[5].UUID)
	for _, name := range []string{"3", "gpu3", h.host.Devices.GPUs[3].UUID} {
		t.Run(name, func(t *testing.T) {
			d := cdiDevice(spec, name)
			require.NotNil(t, d, "device %s", name)
			require.Equal(t, []string{"/dev/nvidia3", "/dev/dri/card4", "/dev/dri/renderD131"}, nodePaths(d.ContainerEdits))
			n := d.ContainerEdits.DeviceNodes[0]
			assert.Equal(t, filepath.Join(h.sim.Roots.Dev, "nvidia3"), n.HostPath, "hostPath")
			assert.Equal(t, "c", n.Type, "type")
			assert.Equal(t, int64(195), n.Major, "major")
			assert.Equal(t, int64(3), n.Minor, "minor")
			assert.Equal(t, "rwm", n.Permissions, "permissions")
		})
	}
	all := cdiDevice(spec, "all")
	require.NotNil(t, all, "device all")
	assert.Len(t, all.ContainerEdits.DeviceNodes, 8*3, "all: %v", nodePaths(all.ContainerEdits))
	checkCommonEdits(t, h, spec)
	checkInjection(t, writeSpec(t, spec))
}

func checkCommonEdits(t *testing.T, h *testHost, spec *specs.Spec) {
	t.Helper()
	e := spec.ContainerEdits
	assert.Equal(t, []string{"NVIDIA_VISIBLE_DEVICES=void", "NVIDIA_CTK_LIBCUDA_DIR=/usr/lib/x86_64-linux-gnu"}, e.Env, "env")
	assert.Equal(t, []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}, nodePaths(e), "shared nodes")
	lib := "/usr/lib/x86_64-linux-gnu/libcuda.so." + ver
	var libcuda *specs.Mount
	for _, m := range e.Mounts {
		if m.ContainerPath == lib {
			libcuda = m
			break
		}
	}
	if assert.NotNil(t, libcuda, "libcuda mount in %+v", e.Mounts) {
		assert.Equal(t, filepath.Join(h.sim.Roots.Driver, lib), libcuda.HostPath, "libcuda hostPath")
		assert.Equal(t, "ro,nosuid,nodev,rbind,rprivate", strings.Join(libcuda.Options, ","), "libcuda options")
	}
	require.Len(t, e.Hooks, 5, "hooks %+v", e.Hooks)
	links, compat, ldcache, nodes, profile := e.Hooks[0], e.Hooks[1], e.Hooks[2], e.Hooks[3], e.Hooks[4]
	assert.Equal(t, "createContainer", links.HookName, "create-symlinks hook")
	assert.Equal(t, cdispec.DefaultHookPath, links.Path, "create-symlinks hook")
	assert.Equal(t, []string{"nvidia-cdi-hook", "create-symlinks"}, links.Args[:2], "create-symlinks hook")
	assert.Contains(t, links.Args, "libcuda.so."+ver+"::/usr/lib/x86_64-linux-gnu/libcuda.so.1", "create-symlinks hook")
	assert.Contains(t, links.Args, "libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so", "create-symlinks hook")
	assert.Equal(t, "createContainer", ldcache.HookName, "update-ldcache hook")
	assert.Equal(t, []string{"nvidia-cdi-hook", "update-ldcache", "--folder", "/usr/lib/x86_64-linux-gnu", "--folder", "/usr/lib/i386-linux-gnu"},
		ldcache.Args, "update-ldcache hook")
	assert.Equal(t, "createContainer", compat.HookName, "enable-cuda-compat hook")
	assert.Equal(t, []string{"nvidia-cdi-hook", "enable-cuda-compat", "--host-driver-version", ver}, compat.Args, "enable-cuda-compat hook")
	assert.Equal(t, "createContainer", nodes.HookName, "disable-device-node-modification hook")
	assert.Equal(t, []string{"nvidia-cdi-hook", "disable-device-node-modification"}, nodes.Args, "disable-device-node-modification hook")
	assert.Equal(t, "createContainer", profile.HookName, "update-application-profile hook")
	assert.Equal(t, []string{"nvidia-cdi-hook", "update-application-profile"}, profile.Args, "update-application-profile hook")
	for _, hk := range e.Hooks {
		assert.Equal(t, cdispec.DefaultHookEnv(), hk.Env, "hook %v env", hk.Args[:2])
	}
}

// checkInjection resolves nvidia.com/gpu=0 through a CDI cache over dir and
// applies it to an empty OCI spec, as a CDI runtime does.
func checkInjection(t *testing.T, dir string) {
	t.Helper()
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dir), cdi.WithAutoRefresh(false))
	require.NoError(t, err)
	require.Empty(t, cache.GetErrors(), "cache errors")
	ociSpec := &oci.Spec{Process: &oci.Process{}, Linux: &oci.Linux{}}
	_, err = cache.InjectDevices(ociSpec, "nvidia.com/gpu=0")
	require.NoError(t, err, "InjectDevices")
	var devs []string
	for _, d := range ociSpec.Linux.Devices {
		devs = append(devs, d.Path)
	}
	assert.Contains(t, devs, "/dev/nvidia0", "injected devices")
	assert.Contains(t, devs, "/dev/nvidiactl", "injected devices")
	assert.NotContains(t, devs, "/dev/nvidia1", "injected devices")
	var rules int
	for _, r := range ociSpec.Linux.Resources.Devices {
		if r.Allow && r.Access == "rwm" && r.Major != nil && *r.Major == 195 {
			rules++
		}
	}
	assert.Equal(t, 3, rules, "cgroup rules for major 195 (nvidiactl, nvidia-modeset, nvidia0): %+v", ociSpec.Linux.Resources.Devices)
	assert.Contains(t, devs, "/dev/dri/card1", "injected devices")
	assert.NotContains(t, devs, "/dev/dri/card2", "injected devices")
	if assert.NotNil(t, ociSpec.Hooks, "hooks") && assert.Len(t, ociSpec.Hooks.CreateContainer, 6, "createContainer hooks") {
		assert.NotEmpty(t, ociSpec.Hooks.CreateContainer[0].Env, "first hook's env")
		assert.Equal(t, []string{"nvidia-cdi-hook", "create-symlinks", "--link", "../card1::/dev/dri/by-path/pci-0000:07:00.0-card",
			"--link", "../renderD128::/dev/dri/by-path/pci-0000:07:00.0-render"}, ociSpec.Hooks.CreateContainer[5].Args, "device 0's hook")
	}
	assert.Contains(t, ociSpec.Process.Env, "NVIDIA_VISIBLE_DEVICES=void", "env")
	assert.GreaterOrEqual(t, len(ociSpec.Mounts), 50, "mounts")
}

// TestCDISpecMIG checks that MIG-enabled GPUs appear whole with their
// node only (what selecting them by index or UUID plans) and as their MIG
// devices, each with its parent's node and its capability nodes.
func TestCDISpecMIG(t *testing.T) {
	for _, backend := range []devices.Backend{devices.NVML, devices.Procfs} {
		t.Run(string(backend), func(t *testing.T) {
			h := migHost(t, backend)
			spec := fromHost(t, h, allStrategies)
			names := deviceNames(spec)
			whole := map[string]string{"1": "/dev/nvidia1", "gpu1": "/dev/nvidia1", h.host.Devices.GPUs[1].UUID: "/dev/nvidia1",
				"3": "/dev/nvidia3", "gpu3": "/dev/nvidia3"}
			for name, node := range whole {
				d := cdiDevice(spec, name)
				if assert.NotNil(t, d, "MIG-enabled GPU %s", name) {
					assert.Equal(t, []string{node}, nodePaths(d.ContainerEdits), "MIG-enabled GPU %s: want %s only", name, node)
				}
			}
			for _, want := range []string{"0", "1:0", "1:1", "3:0", "mig1:0", "mig3:0", "gpu0", "all"} {
				assert.Contains(t, names, want, "device %s", want)
			}
			mig := h.host.Devices.GPUs[1].MIGDevices[1]
			assert.Equal(t, backend == devices.NVML, contains(names, mig.UUID), "MIG UUID %q listed", mig.UUID)
			d := cdiDevice(spec, "1:1")
			require.NotNil(t, d, "device 1:1")
			assert.Equal(t, []string{"/dev/nvidia1", mig.GIAccess.Node.Path, mig.CIAccess.Node.Path}, nodePaths(d.ContainerEdits), "1:1 nodes")
			writeSpec(t, spec)
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestCDIHooksEnv checks that no option gives a hook an empty environment
// and that the validator refuses a spec whose hook has none.
func TestCDIHooksEnv(t *testing.T) {
	h := newTestHost(t, nil)
	for _, tc := range []struct {
		name string
		opts *cdispec.Options
	}{
		{"nil options", nil},
		{"empty env", &cdispec.Options{HookEnv: []string{}}},
		{"own env and path", &cdispec.Options{HookEnv: []string{"NVC_HOOK=1"}, HookPath: "/opt/nvc/bin/nvc-hook"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := fromHost(t, h, tc.opts)
			for _, hk := range spec.ContainerEdits.Hooks {
				assert.NotEmpty(t, hk.Env, "hook %v without env", hk.Args)
				if tc.opts != nil && tc.opts.HookPath != "" {
					assert.Equal(t, tc.opts.HookPath, hk.Path, "hook %+v", hk)
					assert.Equal(t, "nvc-hook", hk.Args[0], "hook %+v", hk)
					assert.Equal(t, []string{"NVC_HOOK=1"}, hk.Env, "hook %+v", hk)
				}
			}
			spec.ContainerEdits.Hooks[0].Env = nil
			assert.ErrorIs(t, cdispec.Validate(spec), cdispec.ErrInvalid, "hook without env accepted")
		})
	}
}

// TestCDIValidate checks that the validator applies the CDI module's
// rules: a version too old for the content, a bad kind, a duplicate or
// empty device.
func TestCDIValidate(t *testing.T) {
	h := newTestHost(t, nil)
	for _, tc := range []struct {
		name   string
		change func(*specs.Spec)
	}{
		{"version 0.4.0 with hostPath", func(s *specs.Spec) { s.Version = "0.4.0" }},
		{"unknown version", func(s *specs.Spec) { s.Version = "9.9.9" }},
		{"bad kind", func(s *specs.Spec) { s.Kind = "nvidia.com" }},
		{"duplicate device", func(s *specs.Spec) { s.Devices = append(s.Devices, s.Devices[0]) }},
		{"empty device", func(s *specs.Spec) { s.Devices[0].ContainerEdits = specs.ContainerEdits{} }},
		{"bad name", func(s *specs.Spec) { s.Devices[0].Name = "-x" }},
		{"no devices", func(s *specs.Spec) { s.Devices = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := fromHost(t, h, nil)
			tc.change(spec)
			assert.ErrorIs(t, cdispec.Validate(spec), cdispec.ErrInvalid)
		})
	}
	t.Run("bad kind option", func(t *testing.T) {
		_, err := cdispec.FromHost(h.host, capabilities.All, &cdispec.Options{Kind: "nvidia.com/gpu/x"})
		assert.ErrorIs(t, err, cdispec.ErrInvalid)
	})
	t.Run("unknown strategy", func(t *testing.T) {
		_, err := cdispec.FromHost(h.host, capabilities.All, &cdispec.Options{NameStrategies: []cdispec.NameStrategy{"serial"}})
		assert.ErrorIs(t, err, cdispec.ErrInvalid)
	})
}

// TestCDIFromPlan checks FromPlan on plans: deterministic bytes, a
// selection of devices, a plan without device node mounts refused.
func TestCDIFromPlan(t *testing.T) {
	h := newTestHost(t, &nvctest.Options{Layout: nvctest.Fedora})
	a, err := cdispec.Marshal(fromHost(t, h, nil), cdispec.FormatYAML)
	require.NoError(t, err)
	b, err := cdispec.Marshal(fromHost(t, h, nil), cdispec.FormatYAML)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b), "the same host gives the same bytes")
	assert.True(t, strings.HasPrefix(string(a), "---\ncdiVersion: 0.5.0\nkind: nvidia.com/gpu\n"), "spec starts oddly:\n%.200s", a)

	p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES=2,5", "NVIDIA_DRIVER_CAPABILITIES=compute"), "", nil)
	spec, err := cdispec.FromPlan(p, &cdispec.Options{NameStrategies: []cdispec.NameStrategy{cdispec.NameIndex}, NoAllDevice: true})
	require.NoError(t, err)
	require.Equal(t, []string{"2", "5"}, deviceNames(spec), "devices")
	assert.Equal(t, []string{"update-ldcache", "--folder", "/usr/lib64"}, spec.ContainerEdits.Hooks[2].Args[1:4], "ldcache hook")

	p = h.plan(t, capsRequest(capabilities.Of(capabilities.Utility)), "", &nvcontainer.PlanOptions{NoDevbind: true})
	_, err = cdispec.FromPlan(p, nil)
	assert.ErrorIs(t, err, cdispec.ErrInvalid, "NoDevbind plan")
	_, err = cdispec.Marshal(spec, "toml")
	assert.Error(t, err, "toml accepted")
}

// hookNames lists a spec's hooks by subcommand.
func hookNames(spec *specs.Spec) []string {
	var out []string
	for _, h := range spec.ContainerEdits.Hooks {
		out = append(out, h.Args[1])
	}
	return out
}

// TestCDIHooksCompatAndNodes checks when the spec carries the toolkit's
// enable-cuda-compat hook (compute asked for, compat not disabled, not
// already decided from an image) and its disable-device-node-modification
// hook (the plan masks /proc/driver/nvidia), in the toolkit's order with
// update-application-profile always last, and that the spec still
// validates and loads.
func TestCDIHooksCompatAndNodes(t *testing.T) {
	h := newTestHost(t, nil)
	all := []string{"create-symlinks", "enable-cuda-compat", "update-ldcache", "disable-device-node-modification", "update-application-profile"}
	noCompat := []string{"create-symlinks", "update-ldcache", "disable-device-node-modification", "update-application-profile"}
	assert.Equal(t, all, hookNames(fromHost(t, h, nil)), "FromHost hooks")
	for _, tc := range []struct {
		name string
		req  *request.Request
		spec string
		want []string
	}{
		{"utility only", capsRequest(capabilities.Of(capabilities.Utility)), "", noCompat},
		{"compute", compatRequest(request.CompatDefault), "", all},
		{"compat mount mode", compatRequest(request.CompatMount), "", all},
		{"compat disabled", compatRequest(request.CompatDisabled), "", noCompat},
		{"compat already used from the image", compatRequest(request.CompatLdconfig), compatRootfs("570.86.10"), noCompat},
		{"image without compat libraries", compatRequest(request.CompatLdconfig), debianRootfs, all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := cdispec.FromPlan(h.plan(t, tc.req, tc.spec, nil), nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, hookNames(spec), "hooks")
			for _, hk := range spec.ContainerEdits.Hooks {
				assert.Equal(t, "createContainer", hk.HookName, "hook %+v", hk)
				assert.Equal(t, cdispec.DefaultHookEnv(), hk.Env, "hook %+v", hk)
			}
			writeSpec(t, spec)
		})
	}
}

// DefaultHookEnv is a fresh slice each time: a caller changing it
// changes no later spec.
func TestDefaultHookEnvFresh(t *testing.T) {
	env := cdispec.DefaultHookEnv()
	env[0] = "LD_PRELOAD=/evil.so"
	assert.Equal(t, []string{"NVIDIA_CTK_DEBUG=false"}, cdispec.DefaultHookEnv(), "DefaultHookEnv after a caller's change")
}

// An empty capability set means no class in FromHost as in a plan: the
// spec holds the device nodes and no driver file.
func TestFromHostEmptyCaps(t *testing.T) {
	h := newTestHost(t, nil)
	spec, err := cdispec.FromHost(h.host, 0, nil)
	require.NoError(t, err)
	p, err := nvcontainer.NewPlan(h.host, &request.Request{Devices: request.Devices{Mode: request.DevicesAll}}, nvcontainer.Container{}, nil)
	require.NoError(t, err)
	want, err := cdispec.FromPlan(p, nil)
	require.NoError(t, err)
	assert.Equal(t, want, spec, "FromHost(host, 0) differs from the plan of an empty capability set")
	for _, m := range spec.ContainerEdits.Mounts {
		assert.NotContains(t, m.HostPath, "libcuda", "empty capability set mounts %s", m.HostPath)
		assert.NotContains(t, m.HostPath, "nvidia-smi", "empty capability set mounts %s", m.HostPath)
	}
}
