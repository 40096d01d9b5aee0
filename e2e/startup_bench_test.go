//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil/container"
)

// envBenchCLI names a prebuilt nvidia-container-cli for the whole-process
// benchmarks (another commit's build, to compare); unset, they build
// ./examples/nvidia-container-cli.
const envBenchCLI = "NVC_BENCH_CLI"

func benchCLI(b *testing.B) string {
	if p := os.Getenv(envBenchCLI); p != "" {
		return p
	}
	return buildExample(b, "nvidia-container-cli", false)
}

// BenchmarkStartup times the CLI's start-up: from the fork of
// `nvidia-container-cli configure` (the command of BenchmarkConfigure) to
// its first open of a host source, the simulated host's proc/devices. That
// file is a FIFO here: the benchmark's blocking open for writing returns
// the moment the CLI opens it for reading, and the CLI is then killed
// (it has changed nothing yet, and waits in its read of the FIFO). No
// tracer slows the process down. One container serves every iteration.
// Reported: the p50 of that wall time (p50-ns) and of the CPU time the
// process used up to the kill (cpu-p50-ns, user+system: steadier than wall
// time on a busy machine).
//
//	NVC_BENCH_CLI=/path/to/other/build go test -tags e2e ./e2e -run '^$' -bench Startup   # another build
func BenchmarkStartup(b *testing.B) {
	cli := benchCLI(b)
	fh := simHost(b, nil)
	fifo := filepath.Join(fh.ProcRoot, "devices")
	require.NoError(b, os.Remove(fifo))
	require.NoError(b, unix.Mkfifo(fifo, 0o644))
	c := container.Start(b, &container.Options{Spec: "file etc/debian_version \"12.5\\n\"\ndir " + libDir[1:] + "\n"})
	args := append(hostFlags(fh), "configure", fmt.Sprintf("--pid=%d", c.PID), "--device=0", "--compute", "--utility", "--no-cgroups", c.Rootfs)
	var wall, cpu []time.Duration
	for b.Loop() {
		w, c := startupOnce(b, cli, args, fifo)
		wall, cpu = append(wall, w), append(cpu, c)
	}
	b.ReportMetric(float64(p50(wall).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(p50(cpu).Nanoseconds()), "cpu-p50-ns")
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// startupOnce starts cli, waits until it opens fifo and kills it; it
// returns the wall time to the open and the process's CPU time.
func startupOnce(b *testing.B, cli string, args []string, fifo string) (time.Duration, time.Duration) {
	cmd := exec.Command(cli, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out := &limitedBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	require.NoError(b, cmd.Start())
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	type open struct {
		f *os.File
		d time.Duration
	}
	opened := make(chan open, 1)
	go func() {
		f, _ := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the CLI opens it
		opened <- open{f, time.Since(start)}
	}()
	select {
	case o := <-opened:
		cmd.Process.Kill()
		<-exited
		o.f.Close() // after the kill: the CLI stays blocked in its read
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return o.d, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	case <-exited:
		// Unblock the writer: we become the reader.
		if r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			o := <-opened
			o.f.Close()
			r.Close()
		}
		b.Fatalf("%s exited before opening %s: %s", cli, fifo, out.buf)
		return 0, 0
	}
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf []byte
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if n := l.max - len(l.buf); n > 0 {
		l.buf = append(l.buf, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// peakRSSKB runs prog with args under GNU time and returns its maximum
// resident set size in KiB, or 0 without /usr/bin/time. Not from the
// rusage of a child of this process: Go starts children with vfork, so
// the child's ru_maxrss starts at this (large) test binary's.
func peakRSSKB(b *testing.B, prog string, args ...string) int64 {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		b.Logf("no peak-rss-KB: %v", err)
		return 0
	}
	f := filepath.Join(b.TempDir(), "rss")
	out, err := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", f, prog}, args...)...).CombinedOutput()
	require.NoError(b, err, "%s: %s", prog, out)
	data, err := os.ReadFile(f)
	require.NoError(b, err)
	kb, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	require.NoError(b, err, "GNU time's %%M: %q", data)
	return kb
}
