package toolkit_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cdispecs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// testCDISpec is a CDI spec of kind example.com/gpu with devices 0 and 1.
const testCDISpec = `{"cdiVersion":"0.5.0","kind":"example.com/gpu",
"containerEdits":{"env":["SPEC_WIDE=1"]},
"devices":[
 {"name":"0","containerEdits":{"deviceNodes":[{"path":"/dev/ex0","type":"c","major":240,"minor":0}]}},
 {"name":"1","containerEdits":{"deviceNodes":[{"path":"/dev/ex1","type":"c","major":240,"minor":1}]}}]}`

// devicePaths lists the device nodes of an OCI spec.
func devicePaths(s *specs.Spec) []string {
	var out []string
	if s.Linux != nil {
		for _, d := range s.Linux.Devices {
			out = append(out, d.Path)
		}
	}
	return out
}

// assertVoided checks that env asks for no GPU: every
// NVIDIA_VISIBLE_DEVICES is void, and there is one.
func assertVoided(t *testing.T, env []string) {
	t.Helper()
	var vals []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "NVIDIA_VISIBLE_DEVICES="); ok {
			vals = append(vals, v)
		}
	}
	require.NotEmpty(t, vals, "env %q", env)
	for _, v := range vals {
		assert.Equal(t, "void", v, "env %q", env)
	}
}

// cdi mode: the named devices' edits (and the spec's) are applied from the
// configured spec dirs and the env request is voided.
func TestApplyModeCDI(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "example.json"), []byte(testCDISpec), 0o644))
	cfg := withMode("cdi", func(c *toolkit.Config) {
		c.Runtime.Modes.CDI.DefaultKind = "example.com/gpu"
		c.Runtime.Modes.CDI.SpecDirs = []string{filepath.Join(dir, "missing"), dir}
	})
	tests := []struct {
		name    string
		env     string
		devices []string
		err     string
	}{
		{"one device", "NVIDIA_VISIBLE_DEVICES=1", []string{"/dev/ex1"}, ""},
		{"qualified names", "NVIDIA_VISIBLE_DEVICES=example.com/gpu=0,example.com/gpu=1", []string{"/dev/ex0", "/dev/ex1"}, ""},
		{"unknown device", "NVIDIA_VISIBLE_DEVICES=7", nil, `unresolvable CDI devices example.com/gpu=7`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := modeSpec(nil, tt.env)
			d, err := toolkit.ResolveMode(spec, cfg)
			require.NoError(t, err)
			changed, err := toolkit.ApplyMode(context.Background(), spec, cfg, d, nil)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.True(t, changed)
			assert.Equal(t, tt.devices, devicePaths(spec))
			assert.Contains(t, spec.Process.Env, "SPEC_WIDE=1")
			assertVoided(t, spec.Process.Env)
		})
	}
}

// jit-cdi mode: the spec of the requested devices is made from the host
// (no spec dir) and applied: the GPU's node, the shared nodes, the driver
// libraries at their host paths and the CDI hooks.
func TestApplyModeJitCDI(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, nil)
	cfg := withMode("jit-cdi", func(c *toolkit.Config) {
		c.CLI.Root, c.CLI.Ldcache, c.CLI.NoLoadKmods = h.Roots.Driver, h.Roots.LDCache, true
		c.Runtime.Modes.CDI.SpecDirs = []string{t.TempDir()}
	})
	opts := &toolkit.JitOptions{Roots: &toolkit.HostRoots{Roots: driver.Roots{Proc: h.Roots.Proc, Dev: h.Roots.Dev}, Backend: devices.Procfs}, HookPath: "/opt/nvc/nvidia-cdi-hook"}
	tests := []struct {
		name         string
		env          string
		with, absent []string
	}{
		{"index", "NVIDIA_VISIBLE_DEVICES=1", []string{"/dev/nvidia1", "/dev/nvidiactl"}, []string{"/dev/nvidia0"}},
		{"jit name", "NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=0", []string{"/dev/nvidia0"}, []string{"/dev/nvidia1"}},
		{"all", "NVIDIA_VISIBLE_DEVICES=all", []string{"/dev/nvidia0", "/dev/nvidia7"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := modeSpec(nil, tt.env, "NVIDIA_DRIVER_CAPABILITIES=compute,utility")
			d, err := toolkit.ResolveMode(spec, cfg)
			require.NoError(t, err)
			require.Equal(t, toolkit.ModeJitCDI, d.Mode)
			changed, err := toolkit.ApplyMode(context.Background(), spec, cfg, d, opts)
			require.NoError(t, err)
			assert.True(t, changed)
			paths := devicePaths(spec)
			for _, p := range tt.with {
				assert.Contains(t, paths, p)
			}
			for _, p := range tt.absent {
				assert.NotContains(t, paths, p)
			}
			assert.True(t, slices.ContainsFunc(spec.Mounts, func(m specs.Mount) bool {
				return filepath.Base(m.Destination) == "libcuda.so."+nvctest.DefaultDriverVersion
			}), "libcuda mounted: %v", spec.Mounts)
			require.NotNil(t, spec.Hooks)
			require.NotEmpty(t, spec.Hooks.CreateContainer)
			assert.Equal(t, "/opt/nvc/nvidia-cdi-hook", spec.Hooks.CreateContainer[0].Path)
			assertVoided(t, spec.Process.Env)
		})
	}
	t.Run("unknown device", func(t *testing.T) {
		spec := modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=9")
		d, err := toolkit.ResolveMode(spec, cfg)
		require.NoError(t, err)
		_, err = toolkit.ApplyMode(context.Background(), spec, cfg, d, opts)
		require.ErrorContains(t, err, "unknown device")
	})
}

// jit-cdi honours modes.jit-cdi.nvcdi-disable-hooks (unknown names
// ignored, "all" every hook) and no-additional-gids-for-device-nodes,
// from [features] or modes.jit-cdi.nvcdi-feature-flags, as the toolkit's
// runtime does.
func TestJitSpecConfig(t *testing.T) {
	testutil.RequireRoot(t) // real device nodes with the video group
	h := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{RealNodes: true})
	for _, n := range []string{"nvidia0", "nvidiactl"} {
		require.NoError(t, os.Chmod(filepath.Join(h.Roots.Dev, n), 0o660))
		require.NoError(t, os.Chown(filepath.Join(h.Roots.Dev, n), 0, 44))
	}
	opts := &toolkit.JitOptions{Roots: &toolkit.HostRoots{Roots: driver.Roots{Proc: h.Roots.Proc, Dev: h.Roots.Dev}, Backend: devices.Procfs}}
	req, err := request.FromSpec(modeSpec(nil, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"), nil)
	require.NoError(t, err)
	hooks := func(s *cdispecs.Spec) []string {
		var names []string
		for _, hk := range s.ContainerEdits.Hooks {
			names = append(names, hk.Args[1])
		}
		return names
	}
	for _, tc := range []struct {
		name   string
		set    func(c *toolkit.Config)
		gone   []string
		kept   []string
		noGIDs bool
	}{
		{"defaults", func(*toolkit.Config) {}, nil, []string{"update-ldcache", "update-application-profile"}, false},
		{"disable hooks", func(c *toolkit.Config) {
			c.Runtime.Modes.JitCDI.NVCDIDisableHooks = []string{"update-application-profile", "no-such-hook"}
		}, []string{"update-application-profile"}, []string{"update-ldcache"}, false},
		{"disable all", func(c *toolkit.Config) { c.Runtime.Modes.JitCDI.NVCDIDisableHooks = []string{"all"} },
			[]string{"update-ldcache", "create-symlinks", "update-application-profile"}, nil, false},
		{"feature", func(c *toolkit.Config) { c.Features.NoAdditionalGIDsForDeviceNodes = true }, nil, nil, true},
		{"nvcdi feature flag", func(c *toolkit.Config) {
			c.Runtime.Modes.JitCDI.NVCDIFeatureFlags = []string{"no-additional-gids-for-device-nodes"}
		}, nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := withMode("jit-cdi", func(c *toolkit.Config) {
				c.CLI.Root, c.CLI.Ldcache, c.CLI.NoLoadKmods = h.Roots.Driver, h.Roots.LDCache, true
				tc.set(c)
			})
			spec, err := toolkit.JitSpec(context.Background(), cfg, req, []string{"0"}, opts)
			require.NoError(t, err)
			got := hooks(spec)
			for _, n := range tc.gone {
				assert.NotContains(t, got, n)
			}
			for _, n := range tc.kept {
				assert.Contains(t, got, n)
			}
			var gids []uint32
			gids = append(gids, spec.ContainerEdits.AdditionalGIDs...)
			for _, d := range spec.Devices {
				gids = append(gids, d.ContainerEdits.AdditionalGIDs...)
			}
			if tc.noGIDs {
				assert.Empty(t, gids)
			} else {
				assert.Contains(t, gids, uint32(44))
			}
		})
	}
}
