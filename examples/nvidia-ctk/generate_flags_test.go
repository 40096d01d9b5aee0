package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"tags.cncf.io/container-device-interface/pkg/cdi"
	specs "tags.cncf.io/container-device-interface/specs-go"
)

// hookNames lists the nvidia-cdi-hook command of every hook of the spec,
// common and per device.
func hookNames(s *cdi.Spec) []string {
	var names []string
	add := func(e specs.ContainerEdits) {
		for _, h := range e.Hooks {
			if len(h.Args) > 1 {
				names = append(names, h.Args[1])
			}
		}
	}
	add(s.ContainerEdits)
	for _, d := range s.Devices {
		add(d.ContainerEdits)
	}
	return names
}

// TestGenerateDeviceID: --device-id limits the spec to those devices.
func TestGenerateDeviceID(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"index", []string{"--device-id", "1"}, []string{"1", "all"}},
		{"two", []string{"--device-id", "0,3"}, []string{"0", "3", "all"}},
		{"all", []string{"--device-id", "all"}, []string{"0", "1", "2", "3", "4", "5", "6", "7", "all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--simulate", "dgxa100", "--device-name-strategy", "index"}, tc.args...)
			spec := generateFile(t, "nvidia.json", args...)
			assert.Equal(t, tc.want, deviceNames(spec.Spec))
		})
	}
}

// TestGenerateHooks: --disable-hook leaves out the hooks named, or all of
// them; --enable-hook keeps one that --disable-hook=all would drop.
func TestGenerateHooks(t *testing.T) {
	full := hookNames(generateFile(t, "nvidia.json", "--simulate", "dgxa100"))
	require.Contains(t, full, "update-ldcache")
	require.Contains(t, full, "create-symlinks")
	for _, tc := range []struct {
		name       string
		args       []string
		gone, kept []string
	}{
		{"one", []string{"--disable-hook", "update-ldcache"}, []string{"update-ldcache"}, []string{"create-symlinks"}},
		{"all", []string{"--disable-hook", "all"}, full, nil},
		{"all-but", []string{"--disable-hook=all", "--enable-hook=create-symlinks"}, []string{"update-ldcache"}, []string{"create-symlinks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hookNames(generateFile(t, "nvidia.json", append([]string{"--simulate", "dgxa100"}, tc.args...)...))
			for _, h := range tc.gone {
				assert.NotContains(t, got, h)
			}
			for _, h := range tc.kept {
				assert.Contains(t, got, h)
			}
		})
	}
	code, _, stderr := ctk(t, "cdi", "generate", "--simulate", "dgxa100", "--disable-hook", "bogus")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `unknown hook "bogus"`)
}

// TestGenerateMode: nvml and management discover the simulated host,
// management writing the "all" device alone; wsl is refused on a host
// without /dev/dxg; unknown modes are refused; --ldconfig-path and
// --library-search-path are accepted.
func TestGenerateMode(t *testing.T) {
	spec := generateFile(t, "nvidia.json", "--simulate", "dgxa100", "--mode", "nvml", "--device-name-strategy", "index")
	assert.Equal(t, []string{"0", "1", "2", "3", "4", "5", "6", "7", "all"}, deviceNames(spec.Spec))
	spec = generateFile(t, "nvidia.json", "--simulate", "dgxa100", "--mode", "management")
	assert.Equal(t, []string{"all"}, deviceNames(spec.Spec))
	assert.Contains(t, nodePaths(spec.Devices[0].ContainerEdits), "/dev/nvidia7")
	generateFile(t, "nvidia.json", "--simulate", "dgxa100", "--ldconfig-path", "/sbin/ldconfig", "--library-search-path", "/opt/lib")
	code, _, stderr := ctk(t, "cdi", "generate", "--simulate", "dgxa100", "--mode", "wsl")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "--mode wsl: no /dev/dxg under the dev root")
	code, _, stderr = ctk(t, "cdi", "generate", "--simulate", "dgxa100", "--mode", "bogus")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `unsupported --mode "bogus"`)
}
