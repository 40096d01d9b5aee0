package nvcontainer_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	oci "github.com/opencontainers/runtime-spec/specs-go"
	"tags.cncf.io/container-device-interface/pkg/cdi"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

func newCDISpec(t *testing.T, h *testHost, opts *nvcontainer.CDIOptions) *specs.Spec {
	t.Helper()
	spec, err := nvcontainer.NewCDISpec(h.host, capabilities.All, opts)
	if err != nil {
		t.Fatal(err)
	}
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

// writeSpec writes spec in both encodings into a new CDI spec dir and
// loads each file with the CDI module's ReadSpec, which validates it as
// a runtime does.
func writeSpec(t *testing.T, spec *specs.Spec) string {
	t.Helper()
	dir := t.TempDir()
	for _, format := range []string{nvcontainer.CDIFormatYAML, nvcontainer.CDIFormatJSON} {
		b, err := nvcontainer.MarshalCDISpec(spec, format)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "nvidia."+format)
		if format == nvcontainer.CDIFormatJSON {
			file = filepath.Join(t.TempDir(), "nvidia.json") // one spec per dir: same kind twice is a conflict
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := cdi.ReadSpec(file, 0); err != nil {
			t.Errorf("CDI module refuses the %s spec: %v", format, err)
		}
	}
	return dir
}

// TestCDISpecDGX checks a spec for the eight GPUs of a DGX A100: it
// loads with the CDI module, names devices per strategy in sorted order,
// and injecting device 0 through a CDI cache (as podman does) gives the
// container /dev/nvidia0, the shared nodes, the driver files and the four
// hooks, each with an explicit environment.
func TestCDISpecDGX(t *testing.T) {
	h := newTestHost(t, nil)
	spec := newCDISpec(t, h, &nvcontainer.CDIOptions{NameStrategies: []nvcontainer.CDINameStrategy{
		nvcontainer.CDINameIndex, nvcontainer.CDINameUUID, nvcontainer.CDINameTypeIndex}})
	if spec.Version != "0.5.0" || spec.Kind != "nvidia.com/gpu" {
		t.Errorf("version %q kind %q", spec.Version, spec.Kind)
	}
	names := deviceNames(spec)
	if len(names) != 8*3+1 || !slices.IsSorted(names) || names[0] != "0" || names[len(names)-1] != "gpu7" ||
		!slices.Contains(names, "all") || !slices.Contains(names, h.host.Devices.GPUs[5].UUID) {
		t.Errorf("names %q", names)
	}
	for _, name := range []string{"3", "gpu3", h.host.Devices.GPUs[3].UUID} {
		d := cdiDevice(spec, name)
		if d == nil || !slices.Equal(nodePaths(d.ContainerEdits), []string{"/dev/nvidia3"}) {
			t.Errorf("%s: %+v", name, d)
			continue
		}
		n := d.ContainerEdits.DeviceNodes[0]
		if n.HostPath != filepath.Join(h.fake.DevRoot, "nvidia3") || n.Type != "c" || n.Major != 195 || n.Minor != 3 || n.Permissions != "rw" {
			t.Errorf("%s node %+v", name, n)
		}
	}
	if all := cdiDevice(spec, "all"); len(all.ContainerEdits.DeviceNodes) != 8 {
		t.Errorf("all: %v", nodePaths(all.ContainerEdits))
	}
	checkCommonEdits(t, h, spec)
	checkInjection(t, writeSpec(t, spec))
}

func checkCommonEdits(t *testing.T, h *testHost, spec *specs.Spec) {
	t.Helper()
	e := spec.ContainerEdits
	if !slices.Equal(e.Env, []string{"NVIDIA_VISIBLE_DEVICES=void"}) {
		t.Errorf("env %q", e.Env)
	}
	if want := []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}; !slices.Equal(nodePaths(e), want) {
		t.Errorf("shared nodes %v", nodePaths(e))
	}
	lib := "/usr/lib/x86_64-linux-gnu/libcuda.so." + ver
	i := slices.IndexFunc(e.Mounts, func(m *specs.Mount) bool { return m.ContainerPath == lib })
	if i < 0 || e.Mounts[i].HostPath != filepath.Join(h.fake.Root, lib) || strings.Join(e.Mounts[i].Options, ",") != "ro,nosuid,nodev,rbind,rprivate" {
		t.Errorf("libcuda mount: %d %+v", i, e.Mounts)
	}
	if len(e.Hooks) != 4 {
		t.Fatalf("hooks %+v", e.Hooks)
	}
	links, compat, ldcache, nodes := e.Hooks[0], e.Hooks[1], e.Hooks[2], e.Hooks[3]
	if links.HookName != "createContainer" || links.Path != nvcontainer.DefaultCDIHookPath ||
		!slices.Equal(links.Args[:2], []string{"nvidia-cdi-hook", "create-symlinks"}) ||
		!slices.Contains(links.Args, "libcuda.so."+ver+"::/usr/lib/x86_64-linux-gnu/libcuda.so.1") ||
		!slices.Contains(links.Args, "libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so") {
		t.Errorf("create-symlinks hook %+v", links)
	}
	want := []string{"nvidia-cdi-hook", "update-ldcache", "--folder", "/usr/lib/x86_64-linux-gnu", "--folder", "/usr/lib/i386-linux-gnu"}
	if ldcache.HookName != "createContainer" || !slices.Equal(ldcache.Args, want) {
		t.Errorf("update-ldcache hook %+v", ldcache)
	}
	if want := []string{"nvidia-cdi-hook", "enable-cuda-compat", "--host-driver-version", ver}; compat.HookName != "createContainer" || !slices.Equal(compat.Args, want) {
		t.Errorf("enable-cuda-compat hook %+v", compat)
	}
	if nodes.HookName != "createContainer" || !slices.Equal(nodes.Args, []string{"nvidia-cdi-hook", "disable-device-node-modification"}) {
		t.Errorf("disable-device-node-modification hook %+v", nodes)
	}
	for _, hk := range e.Hooks {
		if !slices.Equal(hk.Env, nvcontainer.DefaultCDIHookEnv()) {
			t.Errorf("hook %v env %q", hk.Args[:2], hk.Env)
		}
	}
}

// checkInjection resolves nvidia.com/gpu=0 through a CDI cache over dir and
// applies it to an empty OCI spec, as a CDI runtime does.
func checkInjection(t *testing.T, dir string) {
	t.Helper()
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dir), cdi.WithAutoRefresh(false))
	if err != nil {
		t.Fatal(err)
	}
	if errs := cache.GetErrors(); len(errs) != 0 {
		t.Fatalf("cache errors %v", errs)
	}
	ociSpec := &oci.Spec{Process: &oci.Process{}, Linux: &oci.Linux{}}
	if _, err := cache.InjectDevices(ociSpec, "nvidia.com/gpu=0"); err != nil {
		t.Fatal(err)
	}
	var devs []string
	for _, d := range ociSpec.Linux.Devices {
		devs = append(devs, d.Path)
	}
	if !slices.Contains(devs, "/dev/nvidia0") || !slices.Contains(devs, "/dev/nvidiactl") || slices.Contains(devs, "/dev/nvidia1") {
		t.Errorf("injected devices %v", devs)
	}
	var rules int
	for _, r := range ociSpec.Linux.Resources.Devices {
		if r.Allow && r.Access == "rw" && r.Major != nil && *r.Major == 195 {
			rules++
		}
	}
	if rules != 3 { // nvidiactl, nvidia-modeset, nvidia0
		t.Errorf("%d cgroup rules for major 195: %+v", rules, ociSpec.Linux.Resources.Devices)
	}
	if ociSpec.Hooks == nil || len(ociSpec.Hooks.CreateContainer) != 4 || len(ociSpec.Hooks.CreateContainer[0].Env) == 0 {
		t.Errorf("hooks %+v", ociSpec.Hooks)
	}
	if !slices.Contains(ociSpec.Process.Env, "NVIDIA_VISIBLE_DEVICES=void") || len(ociSpec.Mounts) < 50 {
		t.Errorf("env %q, %d mounts", ociSpec.Process.Env, len(ociSpec.Mounts))
	}
}

// TestCDISpecMIG checks that MIG-enabled GPUs appear whole with their
// node only (what selecting them by index or UUID plans) and as their MIG
// devices, each with its parent's node and its capability nodes.
func TestCDISpecMIG(t *testing.T) {
	for _, backend := range []devices.Backend{devices.NVML, devices.Procfs} {
		t.Run(string(backend), func(t *testing.T) {
			h := migHost(t, backend)
			spec := newCDISpec(t, h, &nvcontainer.CDIOptions{NameStrategies: []nvcontainer.CDINameStrategy{
				nvcontainer.CDINameIndex, nvcontainer.CDINameUUID, nvcontainer.CDINameTypeIndex}})
			names := deviceNames(spec)
			whole := map[string]string{"1": "/dev/nvidia1", "gpu1": "/dev/nvidia1", h.host.Devices.GPUs[1].UUID: "/dev/nvidia1",
				"3": "/dev/nvidia3", "gpu3": "/dev/nvidia3"}
			for name, node := range whole {
				if d := cdiDevice(spec, name); d == nil || !slices.Equal(nodePaths(d.ContainerEdits), []string{node}) {
					t.Errorf("MIG-enabled GPU %s: %+v, want %s only", name, d, node)
				}
			}
			for _, want := range []string{"0", "1:0", "1:1", "3:0", "mig1:0", "mig3:0", "gpu0", "all"} {
				if !slices.Contains(names, want) {
					t.Errorf("no device %s in %q", want, names)
				}
			}
			mig := h.host.Devices.GPUs[1].MIGDevices[1]
			if got := slices.Contains(names, mig.UUID); got != (backend == devices.NVML) {
				t.Errorf("MIG UUID %q listed: %v", mig.UUID, got)
			}
			d := cdiDevice(spec, "1:1")
			want := []string{"/dev/nvidia1", mig.GIAccess.Node.Path, mig.CIAccess.Node.Path}
			if d == nil || !slices.Equal(nodePaths(d.ContainerEdits), want) {
				t.Errorf("1:1 nodes %v, want %v", nodePaths(d.ContainerEdits), want)
			}
			writeSpec(t, spec)
		})
	}
}

// TestCDIHooksEnv checks that no option gives a hook an empty environment
// and that the validator refuses a spec whose hook has none.
func TestCDIHooksEnv(t *testing.T) {
	h := newTestHost(t, nil)
	for _, opts := range []*nvcontainer.CDIOptions{nil, {HookEnv: []string{}}, {HookEnv: []string{"NVC_HOOK=1"}, HookPath: "/opt/nvc/bin/nvc-hook"}} {
		spec := newCDISpec(t, h, opts)
		for _, hk := range spec.ContainerEdits.Hooks {
			if len(hk.Env) == 0 {
				t.Errorf("%+v: hook %v without env", opts, hk.Args)
			}
			if opts != nil && opts.HookPath != "" && (hk.Path != opts.HookPath || hk.Args[0] != "nvc-hook" || !slices.Equal(hk.Env, []string{"NVC_HOOK=1"})) {
				t.Errorf("hook %+v", hk)
			}
		}
		spec.ContainerEdits.Hooks[0].Env = nil
		if err := nvcontainer.ValidateCDISpec(spec); !errors.Is(err, nvcontainer.ErrInvalidCDI) {
			t.Errorf("hook without env accepted: %v", err)
		}
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
		spec := newCDISpec(t, h, nil)
		tc.change(spec)
		if err := nvcontainer.ValidateCDISpec(spec); !errors.Is(err, nvcontainer.ErrInvalidCDI) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := nvcontainer.NewCDISpec(h.host, capabilities.All, &nvcontainer.CDIOptions{Kind: "nvidia.com/gpu/x"}); !errors.Is(err, nvcontainer.ErrInvalidCDI) {
		t.Errorf("bad kind option: %v", err)
	}
	if _, err := nvcontainer.NewCDISpec(h.host, capabilities.All, &nvcontainer.CDIOptions{NameStrategies: []nvcontainer.CDINameStrategy{"serial"}}); !errors.Is(err, nvcontainer.ErrInvalidCDI) {
		t.Errorf("unknown strategy: %v", err)
	}
}

// TestCDIFromPlan checks CDISpec on plans: deterministic bytes, a
// selection of devices, a plan without device node mounts refused.
func TestCDIFromPlan(t *testing.T) {
	h := newTestHost(t, &fakehost.Options{Layout: fakehost.Fedora})
	a, _ := nvcontainer.MarshalCDISpec(newCDISpec(t, h, nil), nvcontainer.CDIFormatYAML)
	b, _ := nvcontainer.MarshalCDISpec(newCDISpec(t, h, nil), nvcontainer.CDIFormatYAML)
	if !bytes.Equal(a, b) || !bytes.HasPrefix(a, []byte("---\ncdiVersion: 0.5.0\nkind: nvidia.com/gpu\n")) {
		t.Errorf("specs differ or start oddly:\n%.200s", a)
	}
	p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES=2,5", "NVIDIA_DRIVER_CAPABILITIES=compute"), "", nil)
	spec, err := p.CDISpec(&nvcontainer.CDIOptions{NameStrategies: []nvcontainer.CDINameStrategy{nvcontainer.CDINameIndex}, NoAllDevice: true})
	if err != nil || !slices.Equal(deviceNames(spec), []string{"2", "5"}) {
		t.Fatalf("devices %v (%v)", deviceNames(spec), err)
	}
	if got := spec.ContainerEdits.Hooks[2].Args[1:4]; !slices.Equal(got, []string{"update-ldcache", "--folder", "/usr/lib64"}) {
		t.Errorf("ldcache hook %q", got)
	}
	p = h.plan(t, capsRequest(capabilities.Of(capabilities.Utility)), "", &nvcontainer.PlanOptions{NoDevbind: true})
	if _, err := p.CDISpec(nil); !errors.Is(err, nvcontainer.ErrInvalidCDI) {
		t.Errorf("NoDevbind plan: %v", err)
	}
	if _, err := nvcontainer.MarshalCDISpec(spec, "toml"); err == nil {
		t.Error("toml accepted")
	}
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
// hook (the plan masks /proc/driver/nvidia), in the toolkit's order, and
// that the spec still validates and loads.
func TestCDIHooksCompatAndNodes(t *testing.T) {
	h := newTestHost(t, nil)
	all := []string{"create-symlinks", "enable-cuda-compat", "update-ldcache", "disable-device-node-modification"}
	if got := hookNames(newCDISpec(t, h, nil)); !slices.Equal(got, all) {
		t.Errorf("NewCDISpec hooks %q, want %q", got, all)
	}
	for _, tc := range []struct {
		name string
		req  *request.Request
		spec string
		want []string
	}{
		{"utility only", capsRequest(capabilities.Of(capabilities.Utility)), "",
			[]string{"create-symlinks", "update-ldcache", "disable-device-node-modification"}},
		{"compute", compatRequest(request.CompatDefault), "", all},
		{"compat mount mode", compatRequest(request.CompatMount), "", all},
		{"compat disabled", compatRequest(request.CompatDisabled), "",
			[]string{"create-symlinks", "update-ldcache", "disable-device-node-modification"}},
		{"compat already used from the image", compatRequest(request.CompatLdconfig), compatRootfs("570.86.10"),
			[]string{"create-symlinks", "update-ldcache", "disable-device-node-modification"}},
		{"image without compat libraries", compatRequest(request.CompatLdconfig), debianRootfs, all},
	} {
		spec, err := h.plan(t, tc.req, tc.spec, nil).CDISpec(nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := hookNames(spec); !slices.Equal(got, tc.want) {
			t.Errorf("%s: hooks %q, want %q", tc.name, got, tc.want)
		}
		for _, hk := range spec.ContainerEdits.Hooks {
			if hk.HookName != "createContainer" || !slices.Equal(hk.Env, nvcontainer.DefaultCDIHookEnv()) {
				t.Errorf("%s: hook %+v", tc.name, hk)
			}
		}
		writeSpec(t, spec)
	}
}
