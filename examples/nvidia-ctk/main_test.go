package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"tags.cncf.io/container-device-interface/pkg/cdi"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// ctk runs the program and returns its exit status, stdout and stderr.
// --simulate's host lands in the test's temp dir.
func ctk(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// generateFile runs cdi generate into a new file named name and reads the
// spec back with the CDI module, which validates it as a runtime would.
func generateFile(t *testing.T, name string, args ...string) *cdi.Spec {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	args = append([]string{"cdi", "generate", "--output", file}, args...)
	code, _, stderr := ctk(t, args...)
	require.Equal(t, 0, code, "exit status: %s", stderr)
	spec, err := cdi.ReadSpec(file, 0)
	require.NoError(t, err, "the CDI module refuses the spec")
	return spec
}

func deviceNames(s *specs.Spec) []string {
	var names []string
	for _, d := range s.Devices {
		names = append(names, d.Name)
	}
	return names
}

func nodePaths(e specs.ContainerEdits) []string {
	var paths []string
	for _, n := range e.DeviceNodes {
		paths = append(paths, n.Path)
	}
	return paths
}

// TestGenerateSimulatedMIG checks the names of every strategy on a DGX A100
// whose GPU 1 holds two MIG devices: GPU 1 is listed whole (with its node
// only, what NVIDIA_VISIBLE_DEVICES=1 gives) and as those.
func TestGenerateSimulatedMIG(t *testing.T) {
	spec := generateFile(t, "nvidia.json", "--simulate", "dgxa100", "--simulate-mig", "1=3g.20gb,3g.20gb",
		"--device-name-strategy", "index", "--device-name-strategy", "uuid,type-index")
	raw := spec.Spec
	var want []string
	for i := range 8 {
		want = append(want, itoa(i), nvctest.DGXA100.GPUUUID(i), "gpu"+itoa(i))
	}
	want = append(want, "1:0", "1:1", "mig1:0", "mig1:1", "all")
	got := deviceNames(raw)
	migUUIDs := slices.DeleteFunc(slices.Clone(got), func(n string) bool { return !strings.HasPrefix(n, "MIG-") })
	require.Len(t, migUUIDs, 2, "MIG UUID names")
	want = append(want, migUUIDs...)
	slices.Sort(want)
	require.Equal(t, want, got, "device names")
	// The three names of a MIG device have the same edits: the parent's
	// node and the instance's two access capabilities.
	mig := spec.GetDevice("1:0").Device.ContainerEdits
	if nodes := nodePaths(mig); assert.Len(t, nodes, 3, "1:0 nodes, want /dev/nvidia1 and two nvidia-caps nodes") {
		assert.Equal(t, "/dev/nvidia1", nodes[0], "1:0 nodes %v, want /dev/nvidia1 and two nvidia-caps nodes", nodes)
		assert.True(t, strings.HasPrefix(nodes[1], "/dev/nvidia-caps/nvidia-cap"), "1:0 nodes %v, want /dev/nvidia1 and two nvidia-caps nodes", nodes)
	}
	nodesOf := func(name string) string {
		return strings.Join(nodePaths(spec.GetDevice(name).Device.ContainerEdits), " ")
	}
	assert.Equal(t, nodesOf("1:0"), nodesOf("mig1:0"), "type-index and index names differ")
	assert.Equal(t, nodesOf("1:1"), nodesOf("mig1:1"), "type-index and index names differ")
	assert.NotEqual(t, nodesOf("1:0"), nodesOf("1:1"), "the two MIG devices have the same nodes")
	byUUID := []string{nodesOf(migUUIDs[0]), nodesOf(migUUIDs[1])}
	slices.Sort(byUUID)
	byIndex := []string{nodesOf("1:0"), nodesOf("1:1")}
	slices.Sort(byIndex)
	assert.Equal(t, byIndex, byUUID, "MIG UUID devices' nodes differ from the index devices'")
	assert.Equal(t, []string{"/dev/nvidia1"}, nodePaths(spec.GetDevice("1").Device.ContainerEdits), "1 nodes")
	assert.Len(t, nodePaths(spec.GetDevice("all").Device.ContainerEdits), 7+1+4+7*2,
		"all nodes, want 8 GPU nodes, 4 MIG caps and the card and render nodes of the 7 GPUs not in MIG mode")
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestGenerateDriverRoot generates for a host tree given by roots (as for a
// containerized driver), with a custom kind and hook.
func TestGenerateDriverRoot(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{Layout: nvctest.Fedora})
	spec := generateFile(t, "spec.yaml", "--driver-root", h.Roots.Driver, "--proc-root", h.Roots.Proc,
		"--vendor", "example.com", "--class", "accel", "--hook-path", "/opt/nvc/bin/nvidia-cdi-hook", "--no-all-device")
	raw := spec.Spec
	assert.Equal(t, "example.com/accel", raw.Kind, "kind")
	assert.Equal(t, "0.5.0", raw.Version, "version")
	assert.NotContains(t, deviceNames(raw), "all", "--no-all-device kept all")
	for _, n := range append(spec.GetDevice("0").Device.ContainerEdits.DeviceNodes, raw.ContainerEdits.DeviceNodes...) {
		assert.True(t, strings.HasPrefix(n.HostPath, h.Roots.Driver+"/dev/"), "node %s hostPath %s is not under the dev root", n.Path, n.HostPath)
	}
	var sawCache bool
	for _, hk := range raw.ContainerEdits.Hooks {
		msg := fmt.Sprintf("hook %+v: want createContainer, --hook-path, an explicit env", hk)
		assert.Equal(t, "/opt/nvc/bin/nvidia-cdi-hook", hk.Path, msg)
		assert.NotEmpty(t, hk.Env, msg)
		assert.Equal(t, "createContainer", hk.HookName, msg)
		if slices.Contains(hk.Args, "update-ldcache") {
			sawCache = slices.Contains(hk.Args, "/usr/lib64")
		}
	}
	assert.True(t, sawCache, "no update-ldcache --folder /usr/lib64 hook")
	for _, m := range raw.ContainerEdits.Mounts {
		msg := fmt.Sprintf("mount %s -> %s: want a host path under the driver root, a container path without it", m.HostPath, m.ContainerPath)
		assert.True(t, strings.HasPrefix(m.HostPath, h.Roots.Driver+"/"), msg)
		assert.False(t, strings.HasPrefix(m.ContainerPath, h.Roots.Driver), msg)
	}
}

func TestGenerateFormat(t *testing.T) {
	tests := []struct {
		name, output, format string
		wantJSON             bool
	}{
		{"stdout default", "", "", false},
		{"stdout json", "", "json", true},
		{"json extension", "s.json", "", true},
		{"yaml extension", "s.yaml", "", false},
		{"yml extension", "s.yml", "", false},
		{"other extension", "s.spec", "", false},
		{"format over unknown extension", "s.spec", "json", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"cdi", "generate", "--simulate", "dgxa100"}
			dir := t.TempDir()
			if tt.output != "" {
				args = append(args, "--output", filepath.Join(dir, tt.output))
			}
			if tt.format != "" {
				args = append(args, "--format", tt.format)
			}
			code, out, stderr := ctk(t, args...)
			require.Equal(t, 0, code, "exit status: %s", stderr)
			if tt.output != "" {
				b, err := os.ReadFile(filepath.Join(dir, tt.output))
				require.NoError(t, err)
				out = string(b)
			}
			require.Equal(t, tt.wantJSON, json.Valid([]byte(out)), "output is JSON: %.60q", out)
			if !tt.wantJSON {
				require.True(t, strings.HasPrefix(out, "---\n"), "YAML without document start: %.60q", out)
			}
			assert.Contains(t, stderr, "SIMULATED", "stderr does not say the host is simulated")
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--simulate", "dgxa100", "--device-name-strategy", "name"}, `unknown --device-name-strategy "name"`},
		{[]string{"--simulate", "dgxa100", "--format", "toml"}, `unknown --format "toml"`},
		{[]string{"--simulate", "dgxa100", "--format", "yaml", "--output", "/tmp/x.json"}, "does not match"},
		{[]string{"--simulate", "dgxa100", "--hook-path", "nvidia-cdi-hook"}, "not an absolute path"},
		{[]string{"--simulate", "dgx1"}, `unknown --simulate machine "dgx1"`},
		{[]string{"--simulate", "dgxa100", "--driver-root", "/x"}, "cannot be combined"},
		{[]string{"--simulate-mig", "0=1g.5gb"}, "needs --simulate"},
		{[]string{"--simulate", "dgxa100", "--simulate-mig", "x=1g.5gb"}, "want INDEX=PROFILE"},
		{[]string{"--driver-root", "/nonexistent"}, "opening the host"},
		{[]string{"extra"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := ctk(t, append([]string{"cdi", "generate"}, tt.args...)...)
			assert.Equal(t, 1, code, "%v: exit status, stderr %q", tt.args, stderr)
			assert.Contains(t, stderr, tt.msg, "%v", tt.args)
		})
	}
	for _, args := range [][]string{nil, {"cdi"}, {"hook", "update-ldcache"}, {"cdi", "transform"}} {
		t.Run(fmt.Sprintf("usage %q", args), func(t *testing.T) {
			code, _, stderr := ctk(t, args...)
			assert.Equal(t, 1, code, "%v: exit status, stderr %q", args, stderr)
			assert.Contains(t, stderr, "usage:", "%v: want usage", args)
		})
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	for _, class := range []string{"gpu", "other"} {
		args := []string{"cdi", "generate", "--simulate", "dgxa100", "--class", class,
			"--device-name-strategy", "index", "--output", filepath.Join(dir, class+".yaml")}
		code, _, stderr := ctk(t, args...)
		require.Equal(t, 0, code, "generate %s: exit status: %s", class, stderr)
	}
	broken := filepath.Join(dir, "broken.json")
	require.NoError(t, os.WriteFile(broken, []byte(`{"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[]}`), 0o644))
	code, out, stderr := ctk(t, "cdi", "list", "--spec-dir", dir, "--spec-dir", filepath.Join(dir, "missing"))
	require.Equal(t, 0, code, "cdi list: exit status: %s", stderr)
	var want []string
	for _, class := range []string{"gpu", "other"} {
		for _, n := range []string{"0", "1", "2", "3", "4", "5", "6", "7", "all"} {
			want = append(want, "nvidia.com/"+class+"="+n)
		}
	}
	assert.Equal(t, want, strings.Fields(out), "cdi list")
	assert.Contains(t, stderr, "broken.json", "the refused spec is not reported")
}

// TestGenerateSimulateLeavesNothing: cdi generate --simulate removes the
// generated host when it is done, after a spec is written and after a
// failure; --simulate-keep keeps it.
func TestGenerateSimulateLeavesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "spec.json")
	for _, tt := range []struct {
		name string
		args []string
		code int
		left int
	}{
		{"stdout", nil, 0, 0},
		{"output", []string{"--output", out}, 0, 0},
		{"output fails", []string{"--output", filepath.Join(out, "missing", "spec.json")}, 1, 0},
		{"keep", []string{"--simulate-keep", "--output", out}, 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"cdi", "generate", "--simulate", "dgxa100"}, tt.args...), &stdout, &stderr)
			entries, err := os.ReadDir(tmp)
			require.NoError(t, err)
			assert.Equal(t, tt.code, code, "%s: exit status\n%s", tt.name, stderr.String())
			assert.Len(t, entries, tt.left, "%s: entries left in TMPDIR\n%s", tt.name, stderr.String())
		})
	}
}
