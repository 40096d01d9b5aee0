package main

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// TestGenerateAppProfileHook: the spec's last common hook is
// update-application-profile, as the toolkit's NVML discovery writes it;
// --mode management leaves it out as the toolkit's does; --disable-hook
// (and its alias --disable-hooks) drops it, --enable-hook keeps it alone
// against --disable-hook=all, and --enable-hook=all is refused as the
// toolkit refuses it.
func TestGenerateAppProfileHook(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want func(t *testing.T, hooks []string)
	}{
		{"default", nil, func(t *testing.T, hooks []string) {
			require.NotEmpty(t, hooks)
			assert.Equal(t, appProfileHook, hooks[len(hooks)-1], "last hook of %v", hooks)
		}},
		{"management", []string{"--mode", "management"}, func(t *testing.T, hooks []string) {
			assert.NotContains(t, hooks, appProfileHook)
			assert.Contains(t, hooks, "update-ldcache")
		}},
		{"disabled", []string{"--disable-hook", appProfileHook}, func(t *testing.T, hooks []string) {
			assert.NotContains(t, hooks, appProfileHook)
			assert.Contains(t, hooks, "update-ldcache")
		}},
		{"disabled by alias", []string{"--disable-hooks=" + appProfileHook + ",update-ldcache"}, func(t *testing.T, hooks []string) {
			assert.NotContains(t, hooks, appProfileHook)
			assert.NotContains(t, hooks, "update-ldcache")
		}},
		{"alone", []string{"--disable-hook=all", "--enable-hooks", appProfileHook}, func(t *testing.T, hooks []string) {
			assert.Equal(t, []string{appProfileHook}, hooks)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := generateFile(t, "nvidia.json", append([]string{"--simulate", "dgxa100"}, tc.args...)...)
			var common []string
			for _, h := range spec.ContainerEdits.Hooks {
				common = append(common, h.Args[1])
			}
			all := hookNames(spec)
			require.GreaterOrEqual(t, len(all), len(common))
			assert.Equal(t, common, all[:len(common)], "common hooks")
			for _, h := range all[len(common):] {
				assert.Equal(t, "create-symlinks", h, "a device's own hook, want only its /dev/dri/by-path links")
			}
			tc.want(t, common)
		})
	}
	code, _, stderr := ctk(t, "cdi", "generate", "--simulate", "dgxa100", "--enable-hook", "all")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "--enable-hook all is not supported")
}

// TestGenerateLibrarySearchPath: a driver library moved out of the dir
// the loader cache lists is in the spec with --library-search-path naming
// its new dir (inside the driver root), and missing, with a warning,
// without it; a relative search path is refused.
func TestGenerateLibrarySearchPath(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, nil)
	file := "libnvidia-ptxjitcompiler.so." + h.DriverVersion
	moved := path.Join("/opt/nvidia/lib64", file)
	require.NoError(t, os.MkdirAll(filepath.Join(h.Roots.Driver, "/opt/nvidia/lib64"), 0o755))
	require.NoError(t, os.Rename(filepath.Join(h.Roots.Driver, h.LibDir, file), filepath.Join(h.Roots.Driver, moved)))
	for _, tc := range []struct {
		name  string
		args  []string
		found bool
	}{
		{"without", nil, false},
		{"with", []string{"--library-search-path", "/opt/other,/opt/nvidia/lib64"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"cdi", "generate", "--driver-root", h.Roots.Driver, "--proc-root", h.Roots.Proc, "--format", "json"}, tc.args...)
			code, stdout, stderr := ctk(t, args...)
			require.Equal(t, 0, code, "exit status: %s", stderr)
			var spec specs.Spec
			require.NoError(t, json.Unmarshal([]byte(stdout), &spec))
			mounts := map[string]string{}
			for _, m := range spec.ContainerEdits.Mounts {
				mounts[m.ContainerPath] = m.HostPath
			}
			if tc.found {
				assert.Equal(t, filepath.Join(h.Roots.Driver, moved), mounts[moved], "mount of %s", moved)
				assert.NotContains(t, stderr, "libnvidia-ptxjitcompiler")
			} else {
				assert.NotContains(t, mounts, moved)
				assert.Contains(t, stderr, "libnvidia-ptxjitcompiler")
			}
		})
	}
	code, _, stderr := ctk(t, "cdi", "generate", "--driver-root", h.Roots.Driver, "--proc-root", h.Roots.Proc, "--library-search-path", "opt/lib")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `--library-search-path "opt/lib" is not an absolute path`)
}

// The toolkit's aliases --cdi-vendor, --cdi-class and --nvidia-ctk-path
// set the kind and the hook path.
func TestGenerateAliases(t *testing.T) {
	spec := generateFile(t, "nvidia.json", "--simulate", "dgxa100", "--cdi-vendor", "example.com", "--cdi-class", "acc",
		"--nvidia-ctk-path", "/opt/nvc/nvidia-cdi-hook")
	assert.Equal(t, "example.com/acc", spec.Kind)
	require.NotEmpty(t, spec.ContainerEdits.Hooks)
	assert.Equal(t, "/opt/nvc/nvidia-cdi-hook", spec.ContainerEdits.Hooks[0].Path)
}
