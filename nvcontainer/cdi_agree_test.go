package nvcontainer_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/fakenvml"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// grant is what a container gets, in a form a plan and CDI edits can both
// be reduced to: device nodes and bind mounts by container path, the
// environment, the hooks' arguments and the cgroup rules.
type grant struct {
	nodes  map[string]string // container path -> "hostPath major:minor"
	mounts map[string]string // container path -> "hostPath options"
	env    []string
	hooks  []string // each hook's args after the program name
	rules  []string // "major:minor", sorted
}

func newGrant() *grant { return &grant{nodes: map[string]string{}, mounts: map[string]string{}} }

// planGrant reduces a plan made without a rootfs to what CDI can carry:
// its device node mounts, its other bind mounts, its symlinks and loader
// cache dirs (as the hooks that make them) and its cgroup rules. The
// /proc/driver/nvidia tmpfs is left out: a CDI runtime mounts the host's
// procfs.
func planGrant(p *nvcontainer.Plan) *grant {
	g := newGrant()
	for _, m := range p.Mounts {
		if m.Kind == nvcontainer.MountDevice {
			g.nodes[m.Target] = fmt.Sprintf("%s %d:%d", m.Source, m.Device.Major, m.Device.Minor)
			continue
		}
		g.mounts[m.Target] = m.Source + " " + strings.Join(append(slices.Clone(m.Options), "rbind", "rprivate"), ",")
	}
	g.env = []string{request.EnvVisibleDevices + "=void"}
	if len(p.Symlinks) > 0 {
		h := "create-symlinks"
		for _, l := range p.Symlinks {
			h += " --link " + l.Target + "::" + l.Path
		}
		g.hooks = append(g.hooks, h)
	}
	if p.CUDACompat.Mode != request.CompatDisabled && p.Capabilities.Expand().Has(capabilities.Compute) {
		g.hooks = append(g.hooks, "enable-cuda-compat --host-driver-version "+p.Driver.Version)
	}
	h := "update-ldcache"
	for _, d := range append(slices.Clone(p.LDCache.FirstDirs), p.LDCache.Dirs...) {
		h += " --folder " + d
	}
	g.hooks = append(g.hooks, h, "disable-device-node-modification")
	for _, r := range p.CgroupRules {
		g.rules = append(g.rules, fmt.Sprintf("%d:%d", r.Major, r.Minor))
	}
	slices.Sort(g.rules)
	g.rules = slices.Compact(g.rules)
	return g
}

// add applies CDI edits to g as a runtime does: nodes and mounts by path,
// environment and hooks appended, a cgroup rule per node.
func (g *grant) add(tb testing.TB, e *specs.ContainerEdits) {
	tb.Helper()
	for _, n := range e.DeviceNodes {
		v := fmt.Sprintf("%s %d:%d", n.HostPath, n.Major, n.Minor)
		if have, ok := g.nodes[n.Path]; ok && have != v {
			tb.Errorf("node %s is %s and %s", n.Path, have, v)
		}
		g.nodes[n.Path] = v
		r := fmt.Sprintf("%d:%d", n.Major, n.Minor)
		if !slices.Contains(g.rules, r) {
			g.rules = append(g.rules, r)
			slices.Sort(g.rules)
		}
	}
	for _, m := range e.Mounts {
		g.mounts[m.ContainerPath] = m.HostPath + " " + strings.Join(m.Options, ",")
	}
	for _, v := range e.Env {
		if !slices.Contains(g.env, v) {
			g.env = append(g.env, v)
		}
	}
	for _, h := range e.Hooks {
		g.hooks = append(g.hooks, strings.Join(h.Args[1:], " "))
	}
}

// diff describes how got differs from want; empty when they agree.
func (g *grant) diff(want *grant) string {
	var out []string
	out = append(out, mapDiff("node", g.nodes, want.nodes)...)
	out = append(out, mapDiff("mount", g.mounts, want.mounts)...)
	if !slices.Equal(g.env, want.env) {
		out = append(out, fmt.Sprintf("env %q, plan %q", g.env, want.env))
	}
	if !slices.Equal(g.hooks, want.hooks) {
		out = append(out, fmt.Sprintf("hooks %q, plan %q", g.hooks, want.hooks))
	}
	if !slices.Equal(g.rules, want.rules) {
		out = append(out, fmt.Sprintf("cgroup rules %q, plan %q", g.rules, want.rules))
	}
	return strings.Join(out, "; ")
}

func mapDiff(what string, got, want map[string]string) []string {
	if maps.Equal(got, want) {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if v, ok := got[k]; !ok {
			out = append(out, what+" "+k+" missing")
		} else if v != want[k] {
			out = append(out, fmt.Sprintf("%s %s is %q, plan %q", what, k, v, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			out = append(out, what+" "+k+" not in the plan")
		}
	}
	return out
}

// specGrant is what a runtime gives a container that asks spec for the
// devices named names: the spec's edits and each named device's.
func specGrant(tb testing.TB, spec *specs.Spec, names []string) (*grant, error) {
	tb.Helper()
	g := newGrant()
	g.add(tb, &spec.ContainerEdits)
	for _, name := range names {
		d := cdiDevice(spec, name)
		if d == nil {
			return nil, fmt.Errorf("no device %q in %q", name, deviceNames(spec))
		}
		g.add(tb, &d.ContainerEdits)
	}
	return g, nil
}

// migLayouts are each machine's MIG layout: GPU 1 with two GPU instances,
// GPU 3 with a one-slice compute instance in a three-slice GPU instance,
// GPU 5 in MIG mode without MIG devices.
var migLayouts = map[string]map[int][]string{
	"dgxa100": {1: {"3g.20gb", "1g.5gb"}, 3: {"1c.3g.20gb"}, 5: {}},
	"dgxh100": {1: {"3g.40gb", "1g.10gb"}, 3: {"1c.3g.40gb"}, 5: {}},
	"dgxh200": {1: {"3g.71gb", "1g.18gb"}, 3: {"1c.3g.71gb"}, 5: {}},
	"dgxb200": {1: {"3g.90gb", "1g.23gb"}, 3: {"1c.3g.90gb"}, 5: {}},
}

// deviceIDs are every ID the host offers for a device: each GPU's index
// and UUID, each MIG device's "gpu:mig" and UUID.
func deviceIDs(h *devices.Host) []string {
	var ids []string
	for _, g := range h.GPUs {
		ids = append(ids, strconv.Itoa(g.Index), g.UUID)
		for _, m := range g.MIGDevices {
			ids = append(ids, fmt.Sprintf("%d:%d", m.Parent, m.Index))
			if m.UUID != "" {
				ids = append(ids, m.UUID)
			}
		}
	}
	return ids
}

// selections calls f with every selection of 1 to 3 distinct IDs, in
// order, then with "all".
func selections(ids []string, f func([]string)) {
	n := len(ids)
	for i := range n {
		f([]string{ids[i]})
		for j := i + 1; j < n; j++ {
			f([]string{ids[i], ids[j]})
			for k := j + 1; k < n; k++ {
				f([]string{ids[i], ids[j], ids[k]})
			}
		}
	}
	f([]string{"all"})
}

// TestPlanAndCDIAgree is the property that the plan and its CDI form
// agree: on the four simulated DGXs, with and without MIG, for every
// selection of up to three devices by every name the host offers (index,
// UUID, gpu:mig, MIG UUID) and for "all",
//
//   - the spec written from the selection's plan (Plan.CDISpec) gives a
//     container that asks it for the selected names exactly the plan's
//     device nodes, mounts, environment, hooks and cgroup rules, and so
//     does its "all" device;
//   - the host's spec (NewCDISpec, what cdi generate writes) gives the
//     same for the same names.
func TestPlanAndCDIAgree(t *testing.T) {
	for _, machine := range fakenvml.Machines() {
		for _, mig := range []bool{false, true} {
			name := machine
			opts := &fakehost.Options{Machine: machine}
			if mig {
				name += "-mig"
				opts.MIG = migLayouts[machine]
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				checkAgreement(t, opts)
			})
		}
	}
}

func checkAgreement(t *testing.T, opts *fakehost.Options) {
	fh, err := fakehost.Generate(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	h := openTestHost(t, fh, devices.NVML)
	hostSpec, err := nvcontainer.NewCDISpec(h.host, agreeCaps, nil)
	if err != nil {
		t.Fatalf("NewCDISpec: %v", err)
	}
	var count, failures int
	selections(deviceIDs(h.host.Devices), func(ids []string) {
		count++
		if failures >= 10 {
			return
		}
		if msg := agreement(t, h, hostSpec, ids); msg != "" {
			failures++
			t.Errorf("selection %s: %s", strings.Join(ids, ","), msg)
		}
	})
	if count < 100 {
		t.Errorf("only %d selections", count)
	}
	t.Logf("%d selections", count)
}

// agreeCaps are the capabilities the agreement is checked with: those a
// container gets by default. Device selection does not depend on them,
// and fewer driver files keep the thousands of plans fast.
var agreeCaps = capabilities.Of(capabilities.Compute, capabilities.Utility)

// agreement compares the plan for ids with its own spec and the host's;
// empty when all three agree.
func agreement(t *testing.T, h *testHost, hostSpec *specs.Spec, ids []string) string {
	req := &request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: ids}, Capabilities: agreeCaps}
	if ids[0] == "all" {
		req.Devices = request.Devices{Mode: request.DevicesAll}
	}
	p, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{}, nil)
	if err != nil {
		return "plan: " + err.Error()
	}
	want := planGrant(p)
	spec, err := p.CDISpec(nil)
	if err != nil {
		return "Plan.CDISpec: " + err.Error()
	}
	for _, c := range []struct {
		what  string
		spec  *specs.Spec
		names []string
	}{
		{"plan's spec", spec, ids},
		{"plan's spec, device all", spec, []string{"all"}},
		{"host's spec", hostSpec, ids},
	} {
		g, err := specGrant(t, c.spec, c.names)
		if err != nil {
			return c.what + ": " + err.Error()
		}
		if d := g.diff(want); d != "" {
			return c.what + ": " + d
		}
	}
	return ""
}

// TestPlanAndCDIAgreeSharedInstance checks agreement where two MIG devices
// are compute instances of one GPU instance and so share its access node
// (the mock makes one compute instance per GPU instance; the discovered
// host is edited to share): each device's CDI edits hold the shared node.
func TestPlanAndCDIAgreeSharedInstance(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := openTestHost(t, fh, devices.NVML)
	gpu := &h.host.Devices.GPUs[1]
	a, b := &gpu.MIGDevices[0], &gpu.MIGDevices[1]
	b.GI, b.GIAccess = a.GI, a.GIAccess
	hostSpec, err := nvcontainer.NewCDISpec(h.host, agreeCaps, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"1", gpu.UUID, "1:0", a.UUID, "1:1", b.UUID}
	selections(ids, func(ids []string) {
		if msg := agreement(t, h, hostSpec, ids); msg != "" {
			t.Errorf("selection %s: %s", strings.Join(ids, ","), msg)
		}
	})
	if n := nodePaths(cdiDevice(hostSpec, "1:1").ContainerEdits); !slices.Contains(n, a.GIAccess.Node.Path) {
		t.Errorf("1:1 nodes %v lack the shared GPU instance node %s", n, a.GIAccess.Node.Path)
	}
}

// TestCDIMIGWithoutCapsMajor checks a host whose /proc/devices lists no
// nvidia-caps major: the plan can only bind the MIG capability files
// under /proc/driver/nvidia, which CDI cannot carry, so a spec with a MIG
// device is refused, naming it, rather than written without its access
// nodes; whole GPUs, in MIG mode or not, still get a spec.
func TestCDIMIGWithoutCapsMajor(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(fh.ProcRoot, "devices")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(data)) {
		if f := strings.Fields(l); len(f) != 2 || f[1] != "nvidia-caps" {
			lines = append(lines, l)
		}
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []devices.Backend{devices.NVML, devices.Procfs} {
		t.Run(string(backend), func(t *testing.T) {
			h := openTestHost(t, fh, backend)
			if s := h.host.Devices.NVCapsStyle; s == devices.NVCapsDev {
				t.Fatalf("caps style %s without an nvidia-caps major", s)
			}
			_, err := nvcontainer.NewCDISpec(h.host, agreeCaps, nil)
			if !errors.Is(err, nvcontainer.ErrInvalidCDI) || !strings.Contains(err.Error(), "1:0") || !strings.Contains(err.Error(), "nvidia-caps") {
				t.Errorf("NewCDISpec: %v, want an error naming MIG device 1:0 and nvidia-caps", err)
			}
			for _, ids := range [][]string{{"1:0"}, {"0", "1:1"}} {
				p := h.plan(t, &request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: ids}, Capabilities: agreeCaps}, "", nil)
				if _, err := p.CDISpec(nil); !errors.Is(err, nvcontainer.ErrInvalidCDI) {
					t.Errorf("%s: CDISpec %v, want ErrInvalidCDI", ids, err)
				}
			}
			for _, ids := range [][]string{{"0"}, {"1"}, {"0", "1"}} {
				p := h.plan(t, &request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: ids}, Capabilities: agreeCaps}, "", nil)
				spec, err := p.CDISpec(nil)
				if err != nil {
					t.Fatalf("%s: %v", ids, err)
				}
				g, err := specGrant(t, spec, ids)
				if err != nil {
					t.Fatal(err)
				}
				if d := g.diff(planGrant(p)); d != "" {
					t.Errorf("%s: %s", ids, d)
				}
			}
		})
	}
}
