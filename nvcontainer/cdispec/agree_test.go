package cdispec_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
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
	// devHooks are the devices' own hooks (a GPU's /dev/dri/by-path
	// links), sorted, each once: a runtime runs them in the order the
	// devices are named, and twice for a device named twice.
	devHooks []string
	rules    []string // "major:minor", sorted
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
	var libDirs []string
	for _, m := range p.Mounts {
		if m.Kind == nvcontainer.MountLibrary && strings.HasSuffix(m.Target, ".so."+p.Driver.Version) && !slices.Contains(libDirs, filepath.Dir(m.Target)) {
			libDirs = append(libDirs, filepath.Dir(m.Target))
		}
	}
	if len(libDirs) > 0 {
		g.env = append(g.env, "NVIDIA_CTK_LIBCUDA_DIR="+strings.Join(libDirs, ":"))
	}
	links := map[string]string{} // For -> hook
	for _, l := range p.Symlinks {
		if links[l.For] == "" {
			links[l.For] = "create-symlinks"
		}
		links[l.For] += " --link " + l.Target + "::" + l.Path
	}
	if h, ok := links[""]; ok {
		g.hooks = append(g.hooks, h)
	}
	for id, h := range links {
		if id != "" {
			g.devHooks = append(g.devHooks, h)
		}
	}
	slices.Sort(g.devHooks)
	if p.CUDACompat.Mode != request.CompatDisabled && p.Capabilities.Expand().Has(capabilities.Compute) {
		g.hooks = append(g.hooks, "enable-cuda-compat --host-driver-version "+p.Driver.Version)
	}
	h := "update-ldcache"
	for _, d := range append(slices.Clone(p.LDCache.FirstDirs), p.LDCache.Dirs...) {
		h += " --folder " + d
	}
	// update-application-profile is CDI's alone (the toolkit's last
	// common hook); the plan's Apply, like libnvidia-container, writes no
	// application profile.
	g.hooks = append(g.hooks, h, "disable-device-node-modification", "update-application-profile")
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
		if have, ok := g.nodes[n.Path]; ok {
			assert.Equal(tb, have, v, "node %s given twice, differently", n.Path)
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
		args := strings.Join(h.Args[1:], " ")
		if !strings.Contains(args, devices.DevDRIByPath+"/") {
			g.hooks = append(g.hooks, args)
		} else if !slices.Contains(g.devHooks, args) {
			g.devHooks = append(g.devHooks, args)
			slices.Sort(g.devHooks)
		}
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
	if !slices.Equal(g.devHooks, want.devHooks) {
		out = append(out, fmt.Sprintf("device hooks %q, plan %q", g.devHooks, want.devHooks))
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
var migLayouts = map[nvctest.Machine]map[int][]string{
	nvctest.DGXA100: {1: {"3g.20gb", "1g.5gb"}, 3: {"1c.3g.20gb"}, 5: {}},
	nvctest.DGXH100: {1: {"3g.40gb", "1g.10gb"}, 3: {"1c.3g.40gb"}, 5: {}},
	nvctest.DGXH200: {1: {"3g.71gb", "1g.18gb"}, 3: {"1c.3g.71gb"}, 5: {}},
	nvctest.DGXB200: {1: {"3g.90gb", "1g.23gb"}, 3: {"1c.3g.90gb"}, 5: {}},
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
//   - the spec written from the selection's plan (FromPlan) gives a
//     container that asks it for the selected names exactly the plan's
//     device nodes, mounts, environment, hooks and cgroup rules, and so
//     does its "all" device;
//   - the host's spec (FromHost, what cdi generate writes) gives the
//     same for the same names.
func TestPlanAndCDIAgree(t *testing.T) {
	for _, machine := range nvctest.Machines() {
		if machine.IsTegra() || machine == nvctest.WSL {
			continue // CSV mode: TestFromCSVPlan; WSL2: TestFromHostWSL
		}
		for _, mig := range []bool{false, true} {
			name := string(machine)
			opts := &nvctest.Options{}
			if mig {
				name += "-mig"
				opts.MIG = migLayouts[machine]
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				checkAgreement(t, machine, opts)
			})
		}
	}
}

func checkAgreement(t *testing.T, machine nvctest.Machine, opts *nvctest.Options) {
	h := openTestHost(t, nvctest.NewHost(t, machine, opts), devices.NVML)
	hostSpec, err := cdispec.FromHost(h.host, agreeCaps, nil)
	require.NoError(t, err, "FromHost")
	var count, failures int
	selections(deviceIDs(h.host.Devices), func(ids []string) {
		count++
		if failures >= 10 {
			return
		}
		if !assert.Empty(t, agreement(t, h, hostSpec, ids, agreeCaps), "selection %s", strings.Join(ids, ",")) {
			failures++
		}
	})
	assert.GreaterOrEqual(t, count, 100, "selections")
	t.Logf("%d selections", count)
}

// agreeCaps are the capabilities the agreement is checked with: those a
// container gets by default. Device selection does not depend on them,
// and fewer driver files keep the thousands of plans fast.
var agreeCaps = capabilities.Of(capabilities.Compute, capabilities.Utility)

// agreement compares the plan for ids with its own spec and the host's;
// empty when all three agree.
func agreement(t *testing.T, h *testHost, hostSpec *specs.Spec, ids []string, caps capabilities.Set) string {
	req := listRequest(ids, caps)
	if ids[0] == "all" {
		req.Devices = request.Devices{Mode: request.DevicesAll}
	}
	p, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{}, nil)
	if err != nil {
		return "plan: " + err.Error()
	}
	want := planGrant(p)
	spec, err := cdispec.FromPlan(p, nil)
	if err != nil {
		return "FromPlan: " + err.Error()
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

// TestPlanAndCDIAgreeDRM checks the agreement with graphics, where each
// GPU brings its /dev/dri card and render nodes and a create-symlinks hook
// for their by-path links, on a DGX A100 with and without MIG (a GPU in
// MIG mode gets none), for every selection of up to three devices by
// index; and that the host's spec gives GPU 0 its own DRM nodes (card1,
// renderD128, as the simulated sysfs lists them), not the decoy VGA's
// card0.
func TestPlanAndCDIAgreeDRM(t *testing.T) {
	graphics := capabilities.Of(capabilities.Graphics)
	for _, mig := range []bool{false, true} {
		t.Run(fmt.Sprintf("mig=%v", mig), func(t *testing.T) {
			opts := &nvctest.Options{}
			if mig {
				opts.MIG = migLayouts[nvctest.DGXA100]
			}
			h := openTestHost(t, nvctest.NewHost(t, nvctest.DGXA100, opts), devices.NVML)
			hostSpec, err := cdispec.FromHost(h.host, graphics, nil)
			require.NoError(t, err, "FromHost")
			var ids []string
			for _, id := range deviceIDs(h.host.Devices) {
				if !strings.HasPrefix(id, "GPU-") && !strings.HasPrefix(id, "MIG-") {
					ids = append(ids, id)
				}
			}
			selections(ids, func(ids []string) {
				assert.Empty(t, agreement(t, h, hostSpec, ids, graphics), "selection %s", strings.Join(ids, ","))
			})
			d := cdiDevice(hostSpec, "0")
			require.NotNil(t, d, "device 0")
			assert.Subset(t, nodePaths(d.ContainerEdits), []string{"/dev/nvidia0", "/dev/dri/card1", "/dev/dri/renderD128"}, "device 0's nodes")
			if assert.Len(t, d.ContainerEdits.Hooks, 1, "device 0's hooks") {
				assert.Equal(t, []string{"nvidia-cdi-hook", "create-symlinks",
					"--link", "../card1::/dev/dri/by-path/pci-0000:07:00.0-card",
					"--link", "../renderD128::/dev/dri/by-path/pci-0000:07:00.0-render"}, d.ContainerEdits.Hooks[0].Args, "device 0's hook")
			}
			all := cdiDevice(hostSpec, "all")
			require.NotNil(t, all, "device all")
			assert.NotContains(t, nodePaths(all.ContainerEdits), "/dev/dri/card0", "the decoy VGA's node")
			if mig {
				assert.NotContains(t, nodePaths(cdiDevice(hostSpec, "1").ContainerEdits), "/dev/dri/card2", "a GPU in MIG mode's DRM node")
			}
		})
	}
}

// TestPlanAndCDIAgreeSharedInstance checks agreement where two MIG devices
// are compute instances of one GPU instance and so share its access node
// (the mock makes one compute instance per GPU instance; the discovered
// host is edited to share): each device's CDI edits hold the shared node.
func TestPlanAndCDIAgreeSharedInstance(t *testing.T) {
	sim := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	h := openTestHost(t, sim, devices.NVML)
	gpu := &h.host.Devices.GPUs[1]
	a, b := &gpu.MIGDevices[0], &gpu.MIGDevices[1]
	b.GI, b.GIAccess = a.GI, a.GIAccess
	hostSpec, err := cdispec.FromHost(h.host, agreeCaps, nil)
	require.NoError(t, err, "FromHost")
	ids := []string{"1", gpu.UUID, "1:0", a.UUID, "1:1", b.UUID}
	selections(ids, func(ids []string) {
		assert.Empty(t, agreement(t, h, hostSpec, ids, agreeCaps), "selection %s", strings.Join(ids, ","))
	})
	d := cdiDevice(hostSpec, "1:1")
	require.NotNil(t, d, "device 1:1")
	assert.Contains(t, nodePaths(d.ContainerEdits), a.GIAccess.Node.Path, "1:1 nodes lack the shared GPU instance node")
}

// TestCDIMIGWithoutCapsMajor checks a host whose /proc/devices lists no
// nvidia-caps major: the plan can only bind the MIG capability files
// under /proc/driver/nvidia, which CDI cannot carry, so a spec with a MIG
// device is refused, naming it, rather than written without its access
// nodes; whole GPUs, in MIG mode or not, still get a spec.
func TestCDIMIGWithoutCapsMajor(t *testing.T) {
	sim := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
	file := filepath.Join(sim.Roots.Proc, "devices")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var lines []string
	for l := range strings.Lines(string(data)) {
		if f := strings.Fields(l); len(f) != 2 || f[1] != "nvidia-caps" {
			lines = append(lines, l)
		}
	}
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "")), 0o644))
	for _, backend := range []devices.Backend{devices.NVML, devices.Procfs} {
		t.Run(string(backend), func(t *testing.T) {
			h := openTestHost(t, sim, backend)
			require.NotEqual(t, devices.NVCapsDev, h.host.Devices.NVCapsStyle, "caps style without an nvidia-caps major")
			_, err := cdispec.FromHost(h.host, agreeCaps, nil)
			require.ErrorIs(t, err, cdispec.ErrInvalid, "FromHost: want an error naming MIG device 1:0 and nvidia-caps")
			assert.Contains(t, err.Error(), "1:0", "FromHost's error names the MIG device")
			assert.Contains(t, err.Error(), "nvidia-caps", "FromHost's error names nvidia-caps")
			for _, ids := range [][]string{{"1:0"}, {"0", "1:1"}} {
				t.Run("refused "+strings.Join(ids, ","), func(t *testing.T) {
					_, err := cdispec.FromPlan(h.plan(t, listRequest(ids, agreeCaps), "", nil), nil)
					assert.ErrorIs(t, err, cdispec.ErrInvalid)
				})
			}
			for _, ids := range [][]string{{"0"}, {"1"}, {"0", "1"}} {
				t.Run("written "+strings.Join(ids, ","), func(t *testing.T) {
					p := h.plan(t, listRequest(ids, agreeCaps), "", nil)
					spec, err := cdispec.FromPlan(p, nil)
					require.NoError(t, err)
					g, err := specGrant(t, spec, ids)
					require.NoError(t, err)
					assert.Empty(t, g.diff(planGrant(p)), "spec and plan differ")
				})
			}
		})
	}
}
