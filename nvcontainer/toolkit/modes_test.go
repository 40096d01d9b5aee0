package toolkit_test

import (
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// modeSpec is a container spec with env and annotations.
func modeSpec(ann map[string]string, env ...string) *specs.Spec {
	return &specs.Spec{Process: &specs.Process{Env: append([]string{"PATH=/bin"}, env...)}, Annotations: ann}
}

// withMode is the default config in mode m, changed by edit.
func withMode(m string, edit ...func(*toolkit.Config)) *toolkit.Config {
	c := toolkit.DefaultConfig()
	c.Runtime.Mode = m
	for _, e := range edit {
		e(c)
	}
	return c
}

// ResolveMode follows the toolkit's rule: auto is cdi when only CDI names
// are requested, runtime.nvidia.com/gpu names are made in process, IDs
// get the default kind.
func TestResolveMode(t *testing.T) {
	tests := []struct {
		name    string
		cfg     *toolkit.Config
		spec    *specs.Spec
		mode    string
		devices []string
	}{
		{"auto with an index is legacy", withMode("auto"), modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=0"), "legacy", nil},
		{"empty mode is auto", withMode(""), modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=all"), "legacy", nil},
		{"nil config is auto", nil, modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0"), "cdi", []string{"nvidia.com/gpu=0"}},
		{"auto with only CDI names is cdi", withMode("auto"),
			modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0, nvidia.com/gpu=1,nvidia.com/gpu=0"), "cdi",
			[]string{"nvidia.com/gpu=0", "nvidia.com/gpu=1"}},
		{"auto with a CDI name and an index is legacy", withMode("auto"), modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0,1"), "legacy", nil},
		{"auto with annotations is cdi", withMode("auto"),
			modeSpec(map[string]string{"cdi.k8s.io/b": "vendor.com/x=1", "cdi.k8s.io/a": "nvidia.com/gpu=all,vendor.com/x=1", "other": "x"},
				"NVIDIA_VISIBLE_DEVICES=0"), "cdi", []string{"nvidia.com/gpu=all", "vendor.com/x=1"}},
		{"annotation prefixes are the config's", withMode("auto", func(c *toolkit.Config) {
			c.Runtime.Modes.CDI.AnnotationPrefixes = []string{"example.com/"}
		}), modeSpec(map[string]string{"cdi.k8s.io/a": "nvidia.com/gpu=0", "example.com/d": "nvidia.com/gpu=1"}), "cdi", []string{"nvidia.com/gpu=1"}},
		{"auto with runtime.nvidia.com names is jit-cdi", withMode("auto"),
			modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=0"), "jit-cdi", []string{"runtime.nvidia.com/gpu=0"}},
		{"cdi qualifies IDs with the default kind", withMode("cdi"), modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=0,GPU-1"), "cdi",
			[]string{"nvidia.com/gpu=0", "nvidia.com/gpu=GPU-1"}},
		{"cdi default-kind is honoured", withMode("cdi", func(c *toolkit.Config) { c.Runtime.Modes.CDI.DefaultKind = "example.com/dev" }),
			modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=all"), "cdi", []string{"example.com/dev=all"}},
		{"cdi with void asks nothing", withMode("cdi"), modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=void"), "cdi", nil},
		{"cdi with none asks nothing", withMode("cdi"), modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=none"), "cdi", nil},
		{"jit-cdi qualifies IDs with runtime.nvidia.com/gpu", withMode("jit-cdi"), modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=0,1:0"), "jit-cdi",
			[]string{"runtime.nvidia.com/gpu=0", "runtime.nvidia.com/gpu=1:0"}},
		{"jit-cdi with nvidia.com names uses the spec dirs", withMode("jit-cdi"), modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0"), "cdi",
			[]string{"nvidia.com/gpu=0"}},
		{"legacy stays legacy with CDI names", withMode("legacy"), modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0"), "legacy", nil},
		{"unprivileged env ignored by config", withMode("auto", func(c *toolkit.Config) { c.IgnoreEnvvarUnprivileged = true }),
			modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0"), "legacy", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := toolkit.ResolveMode(tt.spec, tt.cfg)
			require.NoError(t, err)
			assert.Equal(t, tt.mode, d.Mode, "mode")
			assert.Equal(t, tt.devices, d.Devices, "devices")
		})
	}
}

func TestResolveModeErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  *toolkit.Config
		spec *specs.Spec
		want string
		is   error
	}{
		{"unknown mode", withMode("magic"), modeSpec(nil), `mode "magic"`, toolkit.ErrInvalidConfig},
		{"unqualified annotation", withMode("auto"), modeSpec(map[string]string{"cdi.k8s.io/x": "gpu0"}), `annotation "cdi.k8s.io/x": device "gpu0"`, nil},
		{"jit names mixed with others", withMode("cdi"),
			modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=0,nvidia.com/gpu=1"), "runtime.nvidia.com/gpu cannot be requested with", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toolkit.ResolveMode(tt.spec, tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
		})
	}
}

// The hook configures in legacy and auto mode (and with
// skip-mode-detection), and leaves CDI modes to the runtime.
func TestHookSkips(t *testing.T) {
	tests := []struct {
		name string
		cfg  *toolkit.Config
		skip bool
	}{
		{"nil config", nil, false},
		{"auto", withMode("auto"), false},
		{"legacy", withMode("legacy"), false},
		{"cdi", withMode("cdi"), true},
		{"jit-cdi", withMode("jit-cdi"), true},
		{"cdi with skip-mode-detection", withMode("cdi", func(c *toolkit.Config) { c.Hook.SkipModeDetection = true }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, err := toolkit.HookSkips(tt.cfg)
			require.NoError(t, err)
			assert.Equal(t, tt.skip, reason != "", "reason %q", reason)
		})
	}
	_, err := toolkit.HookSkips(withMode("magic"))
	require.ErrorIs(t, err, toolkit.ErrInvalidConfig)
}

// CDI names of NVIDIA's kinds reach configure as the IDs they name.
func TestHookDevices(t *testing.T) {
	tests := []struct {
		name string
		cfg  *toolkit.Config
		env  string
		want request.Devices
		err  string
	}{
		{"index stays", nil, "0,1", request.Devices{Mode: request.DevicesList, IDs: []string{"0", "1"}}, ""},
		{"default kind", nil, "nvidia.com/gpu=0,nvidia.com/gpu=GPU-x", request.Devices{Mode: request.DevicesList, IDs: []string{"0", "GPU-x"}}, ""},
		{"jit kind and dedup", nil, "runtime.nvidia.com/gpu=1,1,nvidia.com/gpu=1:0", request.Devices{Mode: request.DevicesList, IDs: []string{"1", "1:0"}}, ""},
		{"all", nil, "nvidia.com/gpu=all", request.Devices{Mode: request.DevicesAll}, ""},
		{"configured default kind", withMode("auto", func(c *toolkit.Config) { c.Runtime.Modes.CDI.DefaultKind = "example.com/gpu" }),
			"example.com/gpu=0", request.Devices{Mode: request.DevicesList, IDs: []string{"0"}}, ""},
		{"another vendor", nil, "vendor.com/fpga=0", request.Devices{}, `CDI device "vendor.com/fpga=0": not of kind nvidia.com/gpu or runtime.nvidia.com/gpu`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := request.FromSpec(modeSpec(nil, "NVIDIA_VISIBLE_DEVICES="+tt.env), nil)
			require.NoError(t, err)
			err = toolkit.HookDevices(req, tt.cfg)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, req.Devices)
		})
	}
}

func TestVoidDeviceRequest(t *testing.T) {
	tests := []struct {
		name     string
		env, out []string
	}{
		{"replaces every entry", []string{"A=1", "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_VISIBLE_DEVICES=1"},
			[]string{"A=1", "NVIDIA_VISIBLE_DEVICES=void", "NVIDIA_VISIBLE_DEVICES=void"}},
		{"adds one", []string{"NVIDIA_VISIBLE_DEVICES_X=1"}, []string{"NVIDIA_VISIBLE_DEVICES_X=1", "NVIDIA_VISIBLE_DEVICES=void"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &specs.Spec{Process: &specs.Process{Env: tt.env}}
			toolkit.VoidDeviceRequest(s)
			assert.Equal(t, tt.out, s.Process.Env)
		})
	}
}

// EditSpec writes back the members CDI edits touch and keeps the others,
// unknown ones included.
func TestEditSpec(t *testing.T) {
	in := []byte(`{"ociVersion":"1.0.2","process":{"env":["A=1"]},"x-vendor":{"k":[1,2]},"root":{"path":"rootfs"}}`)
	tests := []struct {
		name    string
		edit    func(*specs.Spec) (bool, error)
		changed bool
		want    string
	}{
		{"no change keeps the bytes", func(*specs.Spec) (bool, error) { return false, nil }, false, string(in)},
		{"edit keeps unknown members", func(s *specs.Spec) (bool, error) {
			s.Process.Env = append(s.Process.Env, "B=2")
			s.Linux = &specs.Linux{Devices: []specs.LinuxDevice{{Path: "/dev/x", Type: "c", Major: 1}}}
			return true, nil
		}, true, `{"linux":{"devices":[{"path":"/dev/x","type":"c","major":1,"minor":0}]},"ociVersion":"1.0.2",` +
			`"process":{"cwd":"","env":["A=1","B=2"],"user":{"uid":0,"gid":0}},"root":{"path":"rootfs"},"x-vendor":{"k":[1,2]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changed, err := toolkit.EditSpec(in, tt.edit)
			require.NoError(t, err)
			assert.Equal(t, tt.changed, changed)
			assert.JSONEq(t, tt.want, string(out))
		})
	}
}
