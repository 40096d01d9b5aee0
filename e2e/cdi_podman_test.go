//go:build e2e

package e2e

import (
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
	cdispecs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
)

// cdiCase is a simulated host, our generator and hook, and the spec the
// generator wrote for the host into podman's CDI dir.
type cdiCase struct {
	host      *fakehost.Host
	ctk, hook string
	file      string // the spec in /var/run/cdi
	spec      *cdispecs.Spec
}

// uniqueClass is a CDI class no other spec uses, for the tests that do
// not need the literal nvidia.com/gpu: two specs in one dir defining the
// same device make it unresolvable, and another run of these tests may
// be using the CDI dir at the same time.
func uniqueClass() string { return "gpu" + randomHex() }

// qualified is the fully qualified CDI name of device name.
func (c *cdiCase) qualified(name string) string { return c.spec.Kind + "=" + name }

// newCDICase runs `nvidia-ctk cdi generate` for a new simulated host, with
// our static hook and kind nvidia.com/<class>, writing JSON into
// /var/run/cdi, and reads the spec back with the CDI module (which
// validates it as a runtime does).
func newCDICase(t *testing.T, class string, args ...string) *cdiCase {
	t.Helper()
	return newCDICaseOn(t, cdiHost(t), class, args...)
}

// newCDICaseOn is newCDICase for the simulated host h.
func newCDICaseOn(t *testing.T, h *fakehost.Host, class string, args ...string) *cdiCase {
	t.Helper()
	c := &cdiCase{host: h, ctk: buildExample(t, "nvidia-ctk", false), hook: staticExample(t, "nvidia-cdi-hook")}
	c.file = cdiSpecPath(t, ".json")
	args = append([]string{"cdi", "generate", "--driver-root", h.Root, "--proc-root", h.ProcRoot, "--sys-root", h.SysRoot,
		"--hook-path", c.hook, "--class", class, "--output", c.file}, args...)
	_, stderr, code := run(t, os.Environ(), "", c.ctk, args...)
	require.Equal(t, 0, code, "nvidia-ctk %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	spec, err := cdi.ReadSpec(c.file, 0)
	require.NoError(t, err, "the CDI module refuses the generated spec")
	c.spec = spec.Spec
	return c
}

// rewrite changes the spec file (for controls that take edits away).
func (c *cdiCase) rewrite(t *testing.T, change func(*cdispecs.Spec)) {
	t.Helper()
	change(c.spec)
	data, err := json.Marshal(c.spec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(c.file, data, 0o644))
}

func (c *cdiCase) device(t *testing.T, name string) cdispecs.ContainerEdits {
	t.Helper()
	for _, d := range c.spec.Devices {
		if d.Name == name {
			return d.ContainerEdits
		}
	}
	require.FailNow(t, fmt.Sprintf("spec has no device %q", name))
	return cdispecs.ContainerEdits{}
}

// view is what a container saw: probe key (a path, or a name below) to
// output.
type view map[string]string

// inspect runs a busybox container with --device devices on a new rootfs
// and reports the state of paths (busybox stat: type and hex major:minor),
// the link libcuda.so.1, the program that needs libcuda.so.1, and the
// device cgroup: open0 opens /dev/nvidia0, open1 a node for 195:1 that the
// image holds (outside /dev, which the runtime populates).
func (c *cdiCase) inspect(t *testing.T, runtime string, paths []string, devices ...string) (view, string) {
	t.Helper()
	rootfs := busyboxRootfs(t)
	testutil.BuildTree(t, rootfs, "char nvidia1-node 195 1 0666")
	script := []string{"cd /", probeFunc}
	for _, p := range paths {
		script = append(script, fmt.Sprintf(`p %s "busybox stat -c '%%F %%t:%%T' %s"`, p, p))
	}
	script = append(script,
		"p libcuda.so.1 'busybox readlink /usr/lib64/libcuda.so.1'",
		`p cudaprog '/cudaprog; echo "exit $?"'`,
		"p open0 'busybox head -c1 /dev/nvidia0'",
		"p open1 'busybox head -c1 /nvidia1-node'")
	var opts []string
	for _, d := range devices {
		opts = append(opts, "--device", d)
	}
	stdout, stderr, err := podman(t, runtime, opts, rootfs, "/bin/busybox", "sh", "-c", strings.Join(script, "\n"))
	require.NoError(t, err, "podman run --device %v: %s", devices, stderr)
	return view(parseProbe(stdout)), rootfs
}

// deviceLinks are the link paths of e's create-symlinks hooks (a GPU's
// /dev/dri/by-path links).
func deviceLinks(e cdispecs.ContainerEdits) []string {
	var links []string
	for _, h := range e.Hooks {
		for i, a := range h.Args {
			if i > 0 && h.Args[i-1] == "--link" {
				_, p, _ := strings.Cut(a, "::")
				links = append(links, p)
			}
		}
	}
	return links
}

func charDev(major, minor int64) string {
	return fmt.Sprintf("character special file %x:%x", major, minor)
}

func isMissing(s string) bool { return strings.Contains(s, "No such file") }

// TestCDIPodman runs podman 4.3 with our generated spec: --device
// nvidia.com/gpu=0 gives the container exactly device 0's edits and the
// spec-wide ones (nodes, driver files, our hooks' symlinks and loader
// cache) with GPU 0's /dev/dri nodes and by-path links (the spec is
// generated with the simulated sysfs), --device nvidia.com/gpu=all every
// GPU. Under runc (state without
// a root: the hook reads config.json) and crun (state with "root").
func TestCDIPodman(t *testing.T) {
	for _, runtime := range []string{"runc", "crun"} {
		t.Run(runtime, func(t *testing.T) {
			requirePodman(t, runtime)
			c := newCDICase(t, "gpu")
			t.Run("gpu=0", func(t *testing.T) { c.runDevice0(t, runtime) })
			t.Run("gpu=all", func(t *testing.T) { c.runAll(t, runtime) })
			t.Run("without-update-ldcache", func(t *testing.T) { c.runWithoutLDCacheHook(t, runtime) })
		})
	}
}

func (c *cdiCase) runDevice0(t *testing.T, runtime string) {
	common, dev0 := c.spec.ContainerEdits, c.device(t, "0")
	var present, absent, mounts []string
	want := map[string]string{}
	for _, n := range append(slices.Clone(common.DeviceNodes), dev0.DeviceNodes...) {
		present = append(present, n.Path)
		want[n.Path] = charDev(n.Major, n.Minor)
	}
	for _, d := range c.spec.Devices {
		for _, n := range d.ContainerEdits.DeviceNodes {
			if !slices.Contains(present, n.Path) && !slices.Contains(absent, n.Path) {
				absent = append(absent, n.Path)
			}
		}
	}
	for _, m := range common.Mounts {
		mounts = append(mounts, m.ContainerPath)
	}
	links, otherLinks := deviceLinks(dev0), []string{}
	for _, d := range c.spec.Devices {
		for _, l := range deviceLinks(d.ContainerEdits) {
			if !slices.Contains(links, l) && !slices.Contains(otherLinks, l) {
				otherLinks = append(otherLinks, l)
			}
		}
	}
	require.Len(t, links, 2, "device 0's by-path links (card, render)")
	t.Logf("checking %d nodes present, %d absent, %d driver files, %d links", len(present), len(absent), len(mounts), len(links))
	got, rootfs := c.inspect(t, runtime, slices.Concat(present, absent, mounts, links, otherLinks), c.qualified("0"))
	for _, l := range links {
		assert.True(t, strings.HasPrefix(got[l], "symbolic link"), "%s (device 0's by-path link) in the container: %q", l, got[l])
	}
	for _, l := range otherLinks {
		assert.True(t, isMissing(got[l]), "%s (another device's link) in the container: %q, want absent", l, got[l])
	}
	for _, p := range present {
		assert.Equal(t, want[p], got[p], "%s in the container", p)
	}
	for _, p := range absent {
		assert.True(t, isMissing(got[p]), "%s (another device's node) in the container: %q, want absent", p, got[p])
	}
	for _, p := range mounts {
		assert.NotContains(t, got[p], "can't stat", "driver file %s not in the container", p)
	}
	c.checkIndependent(t, got, rootfs)
}

// checkIndependent checks facts that do not come from the spec: the host
// GPU 0 node and control node, no GPU 1 node, libcuda mounted and linked,
// the program running through our cache, and the device cgroup allowing
// 195:0 (ENXIO: allowed, no driver) but not 195:1 (EPERM).
func (c *cdiCase) checkIndependent(t *testing.T, got view, rootfs string) {
	t.Helper()
	libcuda := "/usr/lib64/libcuda.so." + c.host.DriverVersion
	checks := []struct {
		key  string
		ok   bool
		want string
	}{
		{"/dev/nvidia0", got["/dev/nvidia0"] == charDev(195, 0), "195:0"},
		{"/dev/nvidiactl", got["/dev/nvidiactl"] == charDev(195, 255), "195:255"},
		{"/dev/nvidia1", isMissing(got["/dev/nvidia1"]), "absent"},
		{libcuda, strings.HasPrefix(got[libcuda], "regular file"), "a regular file (bind mount)"},
		{"libcuda.so.1", got["libcuda.so.1"] == "libcuda.so."+c.host.DriverVersion, "a link made by create-symlinks"},
		{"cudaprog", got["cudaprog"] == "exit 0", "exit 0: the loader found libcuda.so.1 through update-ldcache's cache"},
		{"open0", strings.Contains(got["open0"], "No such device or address"), "ENXIO (cgroup allows 195:0)"},
		{"open1", strings.Contains(got["open1"], "Operation not permitted"), "EPERM (cgroup denies 195:1)"},
	}
	for _, ck := range checks {
		assert.True(t, ck.ok, "in the container, %s = %q; want %s", ck.key, got[ck.key], ck.want)
	}
	checkCacheListsLibcuda(t, rootfs, "/usr/lib64")
}

func (c *cdiCase) runAll(t *testing.T, runtime string) {
	var nodes []string
	want := map[string]string{}
	for _, n := range c.device(t, "all").DeviceNodes {
		nodes = append(nodes, n.Path)
		want[n.Path] = charDev(n.Major, n.Minor)
	}
	for i := range 8 {
		p := fmt.Sprintf("/dev/nvidia%d", i)
		require.Equal(t, charDev(195, int64(i)), want[p], "device all has nodes %v, want every GPU's (%s as 195:%d)", nodes, p, i)
	}
	got, _ := c.inspect(t, runtime, nodes, c.qualified("all"))
	for _, p := range nodes {
		assert.Equal(t, want[p], got[p], "%s in the container", p)
	}
	assert.Equal(t, "exit 0", got["cudaprog"], "cudaprog")
	assert.Contains(t, got["open1"], "No such device or address", "opening 195:1 with all GPUs: want ENXIO (allowed)")
}

// runWithoutLDCacheHook is the control: the same spec without the
// update-ldcache hook. The symlinks are still made, but the loader does
// not look in /usr/lib64 (it finds the 32-bit libcuda.so.1 in /usr/lib,
// or nothing), so the program fails: the cache our hook writes is what
// makes it run.
func (c *cdiCase) runWithoutLDCacheHook(t *testing.T, runtime string) {
	c.rewrite(t, func(s *cdispecs.Spec) {
		s.ContainerEdits.Hooks = slices.DeleteFunc(s.ContainerEdits.Hooks, func(h *cdispecs.Hook) bool {
			return slices.Contains(h.Args, "update-ldcache")
		})
	})
	got, _ := c.inspect(t, runtime, nil, c.qualified("0"))
	assert.Equal(t, "libcuda.so."+c.host.DriverVersion, got["libcuda.so.1"], "libcuda.so.1: the create-symlinks hook should still run")
	assert.Contains(t, got["cudaprog"], "error while loading shared libraries: libcuda.so.1", "cudaprog without update-ldcache: want the loader's failure and exit 127")
	assert.True(t, strings.HasSuffix(got["cudaprog"], "exit 127"), "cudaprog without update-ldcache: %q, want the loader's failure and exit 127", got["cudaprog"])
}

// TestCDISpecValid checks the generated spec with the CDI module's cache
// (v1.1.2, as a runtime loads /var/run/cdi) and our stricter validation,
// injects device gpu0 into an OCI spec with it, and lists the names
// with `nvidia-ctk cdi list`.
func TestCDISpecValid(t *testing.T) {
	c := newCDICase(t, uniqueClass(), "--device-name-strategy", "index,uuid,type-index")
	assert.NoError(t, cdispec.Validate(c.spec), "cdispec.Validate")
	cache, err := cdi.NewCache(cdi.WithSpecDirs(filepath.Dir(c.file)), cdi.WithAutoRefresh(false))
	if err != nil {
		t.Logf("CDI cache errors (other specs may be present): %v", err)
	}
	require.Empty(t, cache.GetErrors()[c.file], "the CDI cache refuses our spec")
	var want []string
	for _, d := range c.spec.Devices {
		want = append(want, c.qualified(d.Name))
	}
	listed := cache.ListDevices()
	for _, w := range want {
		assert.Contains(t, listed, w, "the CDI cache does not list %s", w)
	}
	c.checkInjection(t, cache)
	for _, args := range [][]string{{"cdi", "list"}, {"cdi", "list", "--spec-dir", cdiSpecDir}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, stderr, code := run(t, os.Environ(), "", c.ctk, args...)
			got := strings.Fields(out)
			require.Equal(t, 0, code, "nvidia-ctk %v: exit %d\n%s", args, code, stderr)
			for _, w := range want {
				assert.Contains(t, got, w, "nvidia-ctk %v does not list %s:\n%s", args, w, out)
			}
		})
	}
}

func (c *cdiCase) checkInjection(t *testing.T, cache *cdi.Cache) {
	t.Helper()
	oci := readSpec(t, newBundle(t, t.TempDir(), "true", nil, nil))
	unresolved, err := cache.InjectDevices(oci, c.qualified("gpu0"))
	require.NoError(t, err, "injecting %s (unresolved %v)", c.qualified("gpu0"), unresolved)
	var nodes []string
	for _, d := range oci.Linux.Devices {
		nodes = append(nodes, d.Path)
	}
	const nodesMsg = "injected device nodes: want /dev/nvidia0 and /dev/nvidiactl, not /dev/nvidia1"
	assert.Contains(t, nodes, "/dev/nvidia0", nodesMsg)
	assert.NotContains(t, nodes, "/dev/nvidia1", nodesMsg)
	assert.Contains(t, nodes, "/dev/nvidiactl", nodesMsg)
	want := len(c.spec.ContainerEdits.Hooks) + len(c.device(t, "gpu0").Hooks)
	n := len(oci.Hooks.CreateContainer)
	require.NotZero(t, n, "injected no createContainer hooks, want the spec's %d", want)
	require.Equal(t, want, n, "injected createContainer hooks, want the spec's")
	for _, h := range oci.Hooks.CreateContainer {
		assert.Equal(t, c.hook, h.Path, "injected hook %+v: want %s with an explicit env", h, c.hook)
		assert.NotEmpty(t, h.Env, "injected hook %+v: want %s with an explicit env", h, c.hook)
	}
}

// TestCDIPodmanSimulatedMIG generates through `nvidia-ctk cdi generate
// --simulate` (as root: real nodes), with GPU 1 in MIG mode (listed whole
// too, with its node only), and runs podman with the MIG device 1:0: the
// container gets the parent GPU's node and the MIG instance's two access
// capabilities, and no other GPU. The simulated host is the Debian layout, so the loader
// cache is checked with glibc's ldconfig rather than by the program.
func TestCDIPodmanSimulatedMIG(t *testing.T) {
	requirePodman(t, "runc")
	ctk, hook := buildExample(t, "nvidia-ctk", false), staticExample(t, "nvidia-cdi-hook")
	file := cdiSpecPath(t, ".yaml")
	env := append(os.Environ(), "TMPDIR="+t.TempDir()) // the simulated host's dir
	_, stderr, code := run(t, env, "", ctk, "cdi", "generate", "--simulate", "dgxa100", "--simulate-keep", "--simulate-mig", "1=3g.20gb,3g.20gb",
		"--hook-path", hook, "--class", uniqueClass(), "--output", file)
	require.Equal(t, 0, code, "nvidia-ctk: exit %d\n%s", code, stderr)
	require.Contains(t, stderr, "SIMULATED", "nvidia-ctk: exit %d\n%s", code, stderr)
	spec, err := cdi.ReadSpec(file, 0)
	require.NoError(t, err)
	const devicesMsg = "devices %v: want GPU 1 whole (its node only, as NVIDIA_VISIBLE_DEVICES=1 plans it) and as its MIG devices"
	d := spec.GetDevice("1")
	require.NotNil(t, d, devicesMsg, spec.Devices)
	require.Len(t, d.Device.ContainerEdits.DeviceNodes, 1, devicesMsg, spec.Devices)
	require.Equal(t, "/dev/nvidia1", d.Device.ContainerEdits.DeviceNodes[0].Path, devicesMsg, spec.Devices)
	require.NotNil(t, spec.GetDevice("1:0"), devicesMsg, spec.Devices)
	c := &cdiCase{ctk: ctk, hook: hook, file: file, spec: spec.Spec}
	nodes := c.device(t, "1:0").DeviceNodes
	var paths []string
	for _, n := range nodes {
		paths = append(paths, n.Path)
	}
	require.Len(t, nodes, 3, "1:0 has nodes %v, want the GPU's and two capabilities", paths)
	got, rootfs := c.inspect(t, "runc", append(paths, "/dev/nvidia0", "/dev/nvidia2"), c.qualified("1:0"))
	for _, n := range nodes {
		assert.Equal(t, charDev(n.Major, n.Minor), got[n.Path], "%s in the container", n.Path)
	}
	const gpuMsg = "GPU nodes: nvidia1 %q, nvidia0 %q, nvidia2 %q; want only the MIG device's parent, 195:1"
	assert.Equal(t, charDev(195, 1), got["/dev/nvidia1"], gpuMsg, got["/dev/nvidia1"], got["/dev/nvidia0"], got["/dev/nvidia2"])
	assert.True(t, isMissing(got["/dev/nvidia0"]), gpuMsg, got["/dev/nvidia1"], got["/dev/nvidia0"], got["/dev/nvidia2"])
	assert.True(t, isMissing(got["/dev/nvidia2"]), gpuMsg, got["/dev/nvidia1"], got["/dev/nvidia0"], got["/dev/nvidia2"])
	checkCacheListsLibcuda(t, rootfs, "/usr/lib/x86_64-linux-gnu")
	assert.Equal(t, "exit 0", got["cudaprog"], "cudaprog")
}
