package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	if code, _, stderr := ctk(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	spec, err := cdi.ReadSpec(file, 0)
	if err != nil {
		t.Fatalf("the CDI module refuses the spec: %v", err)
	}
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
	if len(migUUIDs) != 2 {
		t.Errorf("MIG UUID names %v, want 2", migUUIDs)
	}
	want = append(want, migUUIDs...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("device names\n got %v\nwant %v", got, want)
	}
	// The three names of a MIG device have the same edits: the parent's
	// node and the instance's two access capabilities.
	mig := spec.GetDevice("1:0").Device.ContainerEdits
	if nodes := nodePaths(mig); len(nodes) != 3 || nodes[0] != "/dev/nvidia1" || !strings.HasPrefix(nodes[1], "/dev/nvidia-caps/nvidia-cap") {
		t.Errorf("1:0 nodes %v, want /dev/nvidia1 and two nvidia-caps nodes", nodes)
	}
	nodesOf := func(name string) string {
		return strings.Join(nodePaths(spec.GetDevice(name).Device.ContainerEdits), " ")
	}
	if nodesOf("mig1:0") != nodesOf("1:0") || nodesOf("mig1:1") != nodesOf("1:1") || nodesOf("1:0") == nodesOf("1:1") {
		t.Errorf("type-index and index names differ: 1:0 %s, mig1:0 %s, 1:1 %s, mig1:1 %s",
			nodesOf("1:0"), nodesOf("mig1:0"), nodesOf("1:1"), nodesOf("mig1:1"))
	}
	byUUID := []string{nodesOf(migUUIDs[0]), nodesOf(migUUIDs[1])}
	slices.Sort(byUUID)
	byIndex := []string{nodesOf("1:0"), nodesOf("1:1")}
	slices.Sort(byIndex)
	if !slices.Equal(byUUID, byIndex) {
		t.Errorf("MIG UUID devices have nodes %q, index devices %q", byUUID, byIndex)
	}
	if nodes := nodePaths(spec.GetDevice("1").Device.ContainerEdits); !slices.Equal(nodes, []string{"/dev/nvidia1"}) {
		t.Errorf("1 nodes %v, want /dev/nvidia1", nodes)
	}
	if nodes := nodePaths(spec.GetDevice("all").Device.ContainerEdits); len(nodes) != 7+1+4 {
		t.Errorf("all has nodes %v, want 8 GPU nodes and 4 MIG caps", nodes)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestGenerateDriverRoot generates for a host tree given by roots (as for a
// containerized driver), with a custom kind and hook.
func TestGenerateDriverRoot(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{Layout: nvctest.Fedora})
	spec := generateFile(t, "spec.yaml", "--driver-root", h.Root, "--proc-root", h.ProcRoot,
		"--vendor", "example.com", "--class", "accel", "--hook-path", "/opt/nvc/bin/nvidia-cdi-hook", "--no-all-device")
	raw := spec.Spec
	if raw.Kind != "example.com/accel" || raw.Version != "0.5.0" {
		t.Errorf("kind %q version %q", raw.Kind, raw.Version)
	}
	if slices.Contains(deviceNames(raw), "all") {
		t.Error("--no-all-device kept all")
	}
	for _, n := range append(spec.GetDevice("0").Device.ContainerEdits.DeviceNodes, raw.ContainerEdits.DeviceNodes...) {
		if !strings.HasPrefix(n.HostPath, h.Root+"/dev/") {
			t.Errorf("node %s hostPath %s is not under the dev root", n.Path, n.HostPath)
		}
	}
	var sawCache bool
	for _, hk := range raw.ContainerEdits.Hooks {
		if hk.Path != "/opt/nvc/bin/nvidia-cdi-hook" || len(hk.Env) == 0 || hk.HookName != "createContainer" {
			t.Errorf("hook %+v: want createContainer, --hook-path, an explicit env", hk)
		}
		if slices.Contains(hk.Args, "update-ldcache") {
			sawCache = slices.Contains(hk.Args, "/usr/lib64")
		}
	}
	if !sawCache {
		t.Error("no update-ldcache --folder /usr/lib64 hook")
	}
	for _, m := range raw.ContainerEdits.Mounts {
		if !strings.HasPrefix(m.HostPath, h.Root+"/") || strings.HasPrefix(m.ContainerPath, h.Root) {
			t.Errorf("mount %s -> %s: want a host path under the driver root, a container path without it", m.HostPath, m.ContainerPath)
		}
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
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if tt.output != "" {
				b, err := os.ReadFile(filepath.Join(dir, tt.output))
				if err != nil {
					t.Fatal(err)
				}
				out = string(b)
			}
			if isJSON := json.Valid([]byte(out)); isJSON != tt.wantJSON {
				t.Fatalf("JSON %v, want %v: %.60q", isJSON, tt.wantJSON, out)
			}
			if !tt.wantJSON && !strings.HasPrefix(out, "---\n") {
				t.Fatalf("YAML without document start: %.60q", out)
			}
			if !strings.Contains(stderr, "SIMULATED") {
				t.Errorf("stderr does not say the host is simulated: %q", stderr)
			}
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
		code, _, stderr := ctk(t, append([]string{"cdi", "generate"}, tt.args...)...)
		if code != 1 || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", tt.args, code, stderr, tt.msg)
		}
	}
	for _, args := range [][]string{nil, {"cdi"}, {"hook", "update-ldcache"}, {"cdi", "transform"}} {
		if code, _, stderr := ctk(t, args...); code != 1 || !strings.Contains(stderr, "usage:") {
			t.Errorf("%v: exit %d, stderr %q; want usage", args, code, stderr)
		}
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	for _, class := range []string{"gpu", "other"} {
		args := []string{"cdi", "generate", "--simulate", "dgxa100", "--class", class,
			"--device-name-strategy", "index", "--output", filepath.Join(dir, class+".yaml")}
		if code, _, stderr := ctk(t, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte(`{"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := ctk(t, "cdi", "list", "--spec-dir", dir, "--spec-dir", filepath.Join(dir, "missing"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var want []string
	for _, class := range []string{"gpu", "other"} {
		for _, n := range []string{"0", "1", "2", "3", "4", "5", "6", "7", "all"} {
			want = append(want, "nvidia.com/"+class+"="+n)
		}
	}
	if got := strings.Fields(out); !slices.Equal(got, want) {
		t.Errorf("cdi list\n got %v\nwant %v", got, want)
	}
	if !strings.Contains(stderr, "broken.json") {
		t.Errorf("the refused spec is not reported: %q", stderr)
	}
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
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"cdi", "generate", "--simulate", "dgxa100"}, tt.args...), &stdout, &stderr)
		entries, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if code != tt.code || len(entries) != tt.left {
			t.Errorf("%s: exit %d, %d entries left in TMPDIR; want %d, %d\n%s", tt.name, code, len(entries), tt.code, tt.left, stderr.String())
		}
	}
}
