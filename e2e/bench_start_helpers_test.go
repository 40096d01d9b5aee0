//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/fakehost"
)

// Fixtures of BenchmarkContainerStart: fresh overlay containers, their
// runs, the checks that each variant did its job and the peak RSS.

// startCase is what every variant shares.
type startCase struct {
	runc, state, busybox, wrapper string
	image                         string // the lower layer of every rootfs
	ldconfig                      string // glibc's
	host                          *fakehost.Host
	variants                      []*startVariant // none first
}

// startVariant is one way of starting the container: plain runc (config
// empty) or through our runtime with config.
type startVariant struct {
	name      string
	gpu       bool
	dir       string // holds rootfs (the overlay's mount point), upper, work, bundle
	rootfs    string
	bundle    string
	spec      []byte // the bundle's config.json before our runtime edits it
	config    string // our runtime's config file; "": plain runc
	rssConfig string // config with runtimes = ["/bin/true"] (peakRSS)
	n         int    // containers run, for their ids
}

// variant makes v's dirs and its bundle, whose process is `busybox true`
// and whose first prestart hook kernelProcHook.
func (c *startCase) variant(b *testing.B, name string, gpu bool) *startVariant {
	v := &startVariant{name: name, gpu: gpu, dir: b.TempDir()}
	v.rootfs = filepath.Join(v.dir, "rootfs")
	require.NoError(b, os.Mkdir(v.rootfs, 0o755))
	var env []string
	if gpu {
		env = []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"}
	}
	// The fixture first: the NVIDIA kernel driver's /proc/driver/nvidia,
	// which our hook masks, in every variant, none too.
	v.bundle = newBundle(b, v.rootfs, "", env, &specs.Hooks{Prestart: []specs.Hook{kernelProcHook(b, c.host, v.rootfs)}})
	editBundle(b, v.bundle, func(s *specs.Spec) { s.Process.Args = []string{"/bin/busybox", "true"} })
	var err error
	v.spec, err = os.ReadFile(filepath.Join(v.bundle, "config.json"))
	require.NoError(b, err)
	return v
}

// prepare mounts a new overlay of the image at v.rootfs and writes v's
// config.json afresh.
func (c *startCase) prepare(b *testing.B, v *startVariant) {
	upper, work := filepath.Join(v.dir, "upper"), filepath.Join(v.dir, "work")
	for _, d := range []string{upper, work} {
		require.NoError(b, os.RemoveAll(d))
		require.NoError(b, os.Mkdir(d, 0o755))
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", c.image, upper, work)
	require.NoError(b, unix.Mount("overlay", v.rootfs, "overlay", 0, opts), "mounting the overlay %s", opts)
	require.NoError(b, os.WriteFile(filepath.Join(v.bundle, "config.json"), v.spec, 0o644))
}

// startTimes are the wall time of one container run and the CPU time
// (user and system) of its processes: runc's (or our runtime's, which
// executes runc) rusage from wait4, which covers every process below it
// that was waited for — runc init, the hooks, their children.
type startTimes struct{ wall, cpu time.Duration }

// start runs the container of v to its exit and returns its times.
func (c *startCase) start(b *testing.B, v *startVariant) startTimes {
	cmd := c.command(v, c.runc, v.config)
	out := &limitedBuffer{max: 8192}
	cmd.Stdout, cmd.Stderr = out, out
	t := time.Now()
	err := cmd.Run()
	wall := time.Since(t)
	require.NoError(b, err, "%s: starting the container: %s", v.name, out.buf)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return startTimes{wall, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
}

// command is the run of v's next container: through our runtime when
// config is set, with runc otherwise.
func (c *startCase) command(v *startVariant, runc, config string) *exec.Cmd {
	v.n++
	args := []string{"--root", c.state, "run", "--bundle", v.bundle, fmt.Sprintf("nvc-start-%s-%d", v.name, v.n)}
	cmd := exec.Command(runc, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if config != "" {
		cmd = exec.Command(c.wrapper, args...)
		cmd.Env = append(cmd.Env[:0:0], "PATH="+os.Getenv("PATH"), "NVIDIA_CTK_CONFIG_FILE_PATH="+config)
	}
	return cmd
}

// finish unmounts the overlay (runc run has removed the container) and
// checks that the run rewrote the image's ld.so.cache (a GPU variant) or
// left it (none).
func (c *startCase) finish(b *testing.B, v *startVariant) {
	require.NoError(b, unix.Unmount(v.rootfs, 0), "unmounting %s", v.rootfs)
	_, err := os.Stat(filepath.Join(v.dir, "upper/etc/ld.so.cache"))
	require.Equal(b, v.gpu, err == nil, "%s: the container's ld.so.cache rewritten: %v (%v)", v.name, err == nil, err)
}

// startProbe prints what a container of BenchmarkContainerStart sees.
const startProbe = "cd /\n" + probeFunc + `
p dev0 'busybox ls -l /dev/nvidia0'
p cudaprog '/cudaprog; echo "exit $?"'
`

// check runs v's probe container: a GPU variant must give /dev/nvidia0,
// a program that needs libcuda.so.1 must load and the cache must list it
// in libDir; none must give neither.
func (c *startCase) check(b *testing.B, v *startVariant) {
	c.prepare(b, v)
	editBundle(b, v.bundle, func(s *specs.Spec) { s.Process.Args = []string{"/bin/sh", "-c", startProbe} })
	cmd := c.command(v, c.runc, v.config)
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, "%s: the probe container: %s", v.name, out)
	got := parseProbe(string(out))
	entries := c.cacheEntries(b, filepath.Join(v.rootfs, "etc/ld.so.cache"))
	c.finish(b, v)
	dev0 := regexp.MustCompile(`^c.* 195, +0 `).MatchString(got["dev0"])
	want := "libcuda.so.1 (libc6,x86-64) => " + libDir + "/libcuda.so.1"
	if v.gpu {
		require.True(b, dev0, "%s: in the container /dev/nvidia0 is %q; want a character device 195:0", v.name, got["dev0"])
		require.Equal(b, "exit 0", got["cudaprog"], "%s: a program that needs libcuda.so.1, in the container", v.name)
		require.Contains(b, entries, want, "%s: the container's ld.so.cache's libcuda.so.1 entries", v.name)
		return
	}
	require.Contains(b, got["dev0"], "No such file", "%s: in the container /dev/nvidia0 is %q", v.name, got["dev0"])
	require.True(b, strings.HasSuffix(got["cudaprog"], "exit 127"), "%s: a program that needs libcuda.so.1, in the container: %q", v.name, got["cudaprog"])
	require.Empty(b, entries, "%s: the container's ld.so.cache's libcuda.so.1 entries", v.name)
}

// rssFormat is GNU time's output: maximum RSS in KiB, elapsed seconds
// and CPU seconds (user + system; both logged, for orientation only).
const rssFormat = "%M %e %U+%S"

// peakRSS is the largest resident set, in KiB, of the processes a GPU
// variant runs besides runc, in one more container: our runtime, run
// under GNU time with runtimes = ["/bin/true"] (coreutils' true, 1 MB,
// in place of runc: our runtime executes the runtime, and a process's
// ru_maxrss spans its execs), then, the config.json it edited given to
// runc with every hook it added run under GNU time (whose ru_maxrss of a
// child covers the child's own children: unshare's ldconfig). 0 without
// /usr/bin/time. The sizes are logged.
func (c *startCase) peakRSS(b *testing.B, v *startVariant) int64 {
	const gnuTime = "/usr/bin/time"
	if _, err := os.Stat(gnuTime); err != nil {
		b.Logf("no peak-rss-KB: %v", err)
		return 0
	}
	c.prepare(b, v)
	dir := b.TempDir()
	cmd := c.command(v, "", v.rssConfig)
	cmd.Args = append([]string{gnuTime, "-f", rssFormat, "-o", filepath.Join(dir, "0-runtime"), cmd.Path}, cmd.Args[1:]...)
	cmd.Path = gnuTime
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, "%s: our runtime under GNU time: %s", v.name, out)
	editBundle(b, v.bundle, func(s *specs.Spec) {
		for stage, hooks := range map[string][]specs.Hook{"prestart": s.Hooks.Prestart, "createRuntime": s.Hooks.CreateRuntime,
			"createContainer": s.Hooks.CreateContainer, "startContainer": s.Hooks.StartContainer, "poststart": s.Hooks.Poststart} {
			for i, h := range hooks {
				if h.Path == c.busybox { // the fixture
					continue
				}
				f := filepath.Join(dir, fmt.Sprintf("%s-%d-%s", stage, i, filepath.Base(h.Path)))
				hooks[i].Args = append([]string{gnuTime, "-f", rssFormat, "-o", f, h.Path}, h.Args[1:]...)
				hooks[i].Path = gnuTime
			}
		}
	})
	runc := c.command(v, c.runc, "")
	out, err = runc.CombinedOutput()
	require.NoError(b, err, "%s: the container with its hooks under GNU time: %s", v.name, out)
	c.finish(b, v)
	files, err := os.ReadDir(dir)
	require.NoError(b, err)
	require.Greater(b, len(files), 1, "%s: no hook ran under GNU time", v.name)
	var peak int64
	var sizes []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		require.NoError(b, err)
		fields := strings.Fields(string(data))
		require.Len(b, fields, 3, "GNU time's %q in %s: %q", rssFormat, f.Name(), data)
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		require.NoError(b, err, "GNU time's %%M in %s: %q", f.Name(), data)
		peak = max(peak, kb)
		sizes = append(sizes, fmt.Sprintf("%s %d KB %s s %s s CPU", f.Name(), kb, fields[1], fields[2]))
	}
	b.Logf("%s: peak RSS: %s", v.name, strings.Join(sizes, ", "))
	return peak
}

// enterPrivateMountNS locks the calling goroutine to its thread and gives
// the thread a mount namespace of its own, private from the host's: the
// overlays and every process started from this goroutine live there, so
// no mount of the benchmark is seen on the host. The thread is never
// unlocked: it ends with the goroutine, and the namespace with it.
func enterPrivateMountNS(b *testing.B) {
	runtime.LockOSThread()
	require.NoError(b, unix.Unshare(unix.CLONE_NEWNS), "unshare(CLONE_NEWNS)")
	require.NoError(b, unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""), "making / private")
}

// cacheEntries are the lines glibc's `ldconfig -p -C cache` prints for
// libcuda.so.1.
func (c *startCase) cacheEntries(b *testing.B, cache string) []string {
	out, err := exec.Command(c.ldconfig, "-p", "-C", cache).CombinedOutput()
	require.NoError(b, err, "ldconfig -p -C %s: %s", cache, out)
	var entries []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "libcuda.so.1 ") {
			entries = append(entries, l)
		}
	}
	return entries
}
