//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	cdispecs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/internal/testutil"
)

// BenchmarkContainerStart times `runc run` of a fresh busybox container
// (Debian layout: etc/debian_version, an ld.so.conf including
// ld.so.conf.d/x86_64-linux-gnu.conf, this host's libraries in
// /usr/lib/x86_64-linux-gnu, about 500 cache entries, and the
// ld.so.cache glibc's ldconfig wrote for them, as an image built on
// Debian has) to the exit of `busybox true`, on a simulated DGX A100
// (device 0, compute and utility), in four variants:
//
//	none:          plain runc, no GPU: the baseline start
//	nvc-hook:      our nvidia-container-runtime in legacy mode: prestart hook
//	               nvidia-container-runtime-hook, which configures in-process
//	               (NVIDIA's hook executes nvidia-container-cli configure)
//	nvc-cdi:       our nvidia-container-runtime in cdi mode with the spec of our
//	               nvidia-ctk cdi generate: runc makes the mounts and device
//	               nodes, our nvidia-cdi-hook (static) the links and the cache
//	toolkit-chain: the same, but the spec's update-ldcache hook replaced by the
//	               toolkit's way, as BenchmarkLDCacheUpdate models it:
//	               unshare --mount --uts --ipc --net --pid --fork ldconfig -r ROOTFS
//	               -C /etc/ld.so.cache -f /etc/ld.so.conf DIR
//
// NVIDIA's binaries are not on this machine, so toolkit-chain is a model
// of its documented behaviour, not a run of it, and a flattering one: it
// leaves out the Go process of NVIDIA's hook (which reads the state and
// config.json, then re-executes itself into the new namespaces), the
// memfd copy of ldconfig and the proc and tmpfs mounts the re-executed
// child makes before running ldconfig. Our other hooks are kept. Every
// variant, none too, has kernelProcHook as its first prestart hook: it
// stands in for the NVIDIA kernel driver's /proc/driver/nvidia, which
// our legacy hook masks.
//
// Each container's rootfs is a new overlay (the image as the lower layer,
// as Docker and Podman give one) in a private mount namespace of the
// benchmark's, and its config.json a fresh copy: made and removed with
// the timer stopped. Each GPU variant's iteration also runs a `none`
// container, alternately before and after it, so that the VM's noise
// hits both alike. Reported: ns/op (the variant's mean), p50-ms (its
// median), none-p50-ms (the median of the none runs beside it) and
// added-ms, the median of the per-iteration differences (variant minus
// the none run beside it): the start latency the variant adds. cpu-p50-ms
// and added-cpu-ms are the same for the CPU time of the run's processes
// (startTimes), steadier than wall time on a loaded machine.
// peak-rss-KB is the largest resident set of any process the variant runs
// besides runc (see peakRSS), in one more container started after
// the timed ones.
//
// Before timing, each variant runs a probe container once: a GPU variant
// must show /dev/nvidia0 as 195:0 and load a program that needs
// libcuda.so.1, and its ld.so.cache must list libcuda.so.1 in
// /usr/lib/x86_64-linux-gnu (glibc's ldconfig -p reads it); none must show
// neither. Each timed run must exit 0 and a GPU variant's must have
// rewritten the cache (it is in the overlay's upper layer), none's must
// not: a variant that stopped doing its job fails the benchmark instead
// of reporting a fast time.
//
//	go test -tags e2e ./e2e -run '^$' -bench ContainerStart -benchtime 20x
func BenchmarkContainerStart(b *testing.B) {
	c := newStartCase(b)
	for _, v := range c.variants {
		b.Run(v.name, func(b *testing.B) {
			enterPrivateMountNS(b)
			c.check(b, c.variants[0])
			if v == c.variants[0] {
				c.benchNone(b)
				return
			}
			c.check(b, v)
			c.benchVariant(b, v)
			if rss := c.peakRSS(b, v); rss > 0 {
				b.ReportMetric(float64(rss), "peak-rss-KB")
			}
		})
	}
}

// benchNone times the none variant alone.
func (c *startCase) benchNone(b *testing.B) {
	var wall, cpu []time.Duration
	for b.Loop() {
		t := c.timedRun(b, c.variants[0])
		wall, cpu = append(wall, t.wall), append(cpu, t.cpu)
	}
	b.ReportMetric(ms(p50(wall)), "p50-ms")
	b.ReportMetric(ms(p50(cpu)), "cpu-p50-ms")
}

// benchVariant times v, each run beside an untimed none run, alternately
// after and before it.
func (c *startCase) benchVariant(b *testing.B, v *startVariant) {
	var wall, noneWall, added, cpu, addedCPU []time.Duration
	for i := 0; b.Loop(); i++ {
		var tv, tn startTimes
		if i%2 == 0 {
			tn = c.untimedRun(b, c.variants[0])
			tv = c.timedRun(b, v)
		} else {
			tv = c.timedRun(b, v)
			tn = c.untimedRun(b, c.variants[0])
		}
		wall, noneWall, added = append(wall, tv.wall), append(noneWall, tn.wall), append(added, tv.wall-tn.wall)
		cpu, addedCPU = append(cpu, tv.cpu), append(addedCPU, tv.cpu-tn.cpu)
	}
	b.ReportMetric(ms(p50(wall)), "p50-ms")
	b.ReportMetric(ms(p50(noneWall)), "none-p50-ms")
	b.ReportMetric(ms(p50(added)), "added-ms")
	b.ReportMetric(ms(p50(cpu)), "cpu-p50-ms")
	b.ReportMetric(ms(p50(addedCPU)), "added-cpu-ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// timedRun prepares a fresh container of v with the timer stopped, times
// its run and cleans up with the timer stopped; it returns the run's times.
func (c *startCase) timedRun(b *testing.B, v *startVariant) startTimes {
	b.StopTimer()
	c.prepare(b, v)
	b.StartTimer()
	d := c.start(b, v)
	b.StopTimer()
	c.finish(b, v)
	b.StartTimer()
	return d
}

// untimedRun is timedRun with the benchmark's timer stopped throughout.
func (c *startCase) untimedRun(b *testing.B, v *startVariant) startTimes {
	b.StopTimer()
	defer b.StartTimer()
	c.prepare(b, v)
	d := c.start(b, v)
	c.finish(b, v)
	return d
}

// newStartCase builds our programs, the simulated host, the image, the
// CDI specs and a bundle per variant.
func newStartCase(b *testing.B) *startCase {
	rt := requireRuntime(b, "runc")
	unshare := testutil.RequireCommand(b, "unshare")
	busybox := testutil.RequireCommand(b, "busybox")
	glibc := testutil.GlibcLdconfig(b)
	c := &startCase{runc: rt.path, state: rt.state, busybox: busybox, host: simHost(b, nil),
		wrapper: buildExample(b, "nvidia-container-runtime", false)}
	c.ldconfig, c.image = glibc, startImage(b, glibc)
	hook := buildExample(b, "nvidia-container-runtime-hook", false)
	cdiHook := buildExample(b, "nvidia-cdi-hook", true)
	spec := generateSpec(b, c, cdiHook)

	none := c.variant(b, "none", false)
	legacy := c.variant(b, "nvc-hook", true)
	legacy.config = c.wrapperConfig(b, legacy, `mode = "legacy"`, "[nvidia-container-runtime-hook]", "path = "+quote(hook))
	cdi := c.variant(b, "nvc-cdi", true)
	cdi.config = c.wrapperConfig(b, cdi, `mode = "cdi"`, "[nvidia-container-runtime.modes.cdi]", "spec-dirs = ["+quote(writeSpec(b, spec))+"]")
	chain := c.variant(b, "toolkit-chain", true)
	tk := toolkitSpec(b, spec, unshare, glibc, chain.rootfs)
	chain.config = c.wrapperConfig(b, chain, `mode = "cdi"`, "[nvidia-container-runtime.modes.cdi]", "spec-dirs = ["+quote(writeSpec(b, tk))+"]")
	c.variants = []*startVariant{none, legacy, cdi, chain}
	return c
}

// generateSpec runs our nvidia-ctk cdi generate on the simulated host.
func generateSpec(b *testing.B, c *startCase, cdiHook string) *cdispecs.Spec {
	out := filepath.Join(b.TempDir(), "nvidia.json")
	args := []string{"cdi", "generate", "--driver-root", c.host.Root, "--proc-root", c.host.ProcRoot,
		"--hook-path", cdiHook, "--output", out}
	_, stderr, code := run(b, os.Environ(), "", buildExample(b, "nvidia-ctk", false), args...)
	require.Equal(b, 0, code, "nvidia-ctk %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	data, err := os.ReadFile(out)
	require.NoError(b, err)
	var spec cdispecs.Spec
	require.NoError(b, json.Unmarshal(data, &spec))
	var hooks []string
	for _, h := range spec.ContainerEdits.Hooks {
		hooks = append(hooks, strings.Join(h.Args[1:min(2, len(h.Args))], ""))
	}
	b.Logf("our spec: %d mounts, %d devices, hooks %s", len(spec.ContainerEdits.Mounts), len(spec.Devices), strings.Join(hooks, ", "))
	return &spec
}

// writeSpec writes spec as nvidia.json in a new spec dir and returns the
// dir.
func writeSpec(b *testing.B, spec *cdispecs.Spec) string {
	dir := b.TempDir()
	data, err := json.Marshal(spec)
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(filepath.Join(dir, "nvidia.json"), data, 0o644))
	return dir
}

// toolkitSpec is spec with its update-ldcache hook replaced by the
// toolkit's chain (see BenchmarkContainerStart) on rootfs: the same
// folders, scanned by glibc's ldconfig in new namespaces.
func toolkitSpec(b *testing.B, spec *cdispecs.Spec, unshare, ldconfig, rootfs string) *cdispecs.Spec {
	var tk cdispecs.Spec
	data, err := json.Marshal(spec)
	require.NoError(b, err)
	require.NoError(b, json.Unmarshal(data, &tk))
	i := hookIndex(&tk, "update-ldcache")
	require.GreaterOrEqual(b, i, 0, "our spec has no update-ldcache hook: %+v", tk.ContainerEdits.Hooks)
	var folders []string
	for j, a := range tk.ContainerEdits.Hooks[i].Args {
		if a == "--folder" && j+1 < len(tk.ContainerEdits.Hooks[i].Args) {
			folders = append(folders, tk.ContainerEdits.Hooks[i].Args[j+1])
		}
	}
	require.Contains(b, folders, libDir, "the update-ldcache hook's folders")
	args := []string{"unshare", "--mount", "--uts", "--ipc", "--net", "--pid", "--fork",
		ldconfig, "-r", rootfs, "-C", "/etc/ld.so.cache", "-f", "/etc/ld.so.conf"}
	tk.ContainerEdits.Hooks[i] = &cdispecs.Hook{HookName: "createContainer", Path: unshare,
		Args: append(args, folders...), Env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}}
	return &tk
}

// wrapperConfig writes the config file of our runtime for v: the
// simulated host, mode, runc, and more lines.
func (c *startCase) wrapperConfig(b *testing.B, v *startVariant, mode string, more ...string) string {
	lines := append([]string{"[nvidia-container-runtime]", mode, "runtimes = [" + quote(c.runc) + "]"}, more...)
	v.rssConfig = hookConfig(b, c.host, nil, append([]string{"[nvidia-container-runtime]", mode, `runtimes = ["/bin/true"]`}, more...)...)
	return hookConfig(b, c.host, nil, lines...)
}

// startImage is the image of every container: busyboxRootfs (busybox,
// the loader, libc, /cudaprog) with Debian's multiarch loader config,
// hard links to this host's libraries in /usr/lib/x86_64-linux-gnu
// (linkSystemLibraries) and the ld.so.cache glibc's ldconfig writes for
// them, as an image's build leaves one.
func startImage(b *testing.B, ldconfig string) string {
	root := busyboxRootfs(b)
	testutil.BuildTree(b, root, "file etc/ld.so.conf.d/x86_64-linux-gnu.conf \"/usr/local/lib/x86_64-linux-gnu\\n/lib/x86_64-linux-gnu\\n"+libDir+"\\n\"\n")
	linkSystemLibraries(b, root)
	out, err := exec.Command(ldconfig, "-r", root).CombinedOutput()
	require.NoError(b, err, "ldconfig -r %s: %s", root, out)
	n := 0
	for _, e := range testutil.LdconfigEntries(b, filepath.Join(root, "etc/ld.so.cache")) {
		if strings.Contains(e, "=> "+libDir+"/") {
			n++
		}
		require.NotContains(b, e, "libcuda", "the image's cache")
	}
	require.Greater(b, n, 100, "entries in %s of the image's ld.so.cache", libDir)
	b.Logf("image: %d cache entries in %s", n, libDir)
	return root
}
