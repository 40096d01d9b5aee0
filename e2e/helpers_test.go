//go:build e2e

package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	examples.cleanup()
	os.Exit(code)
}

// examples are the example binaries built in this test binary's run.
var examples builds

type builds struct {
	mu    sync.Mutex
	dir   string
	built map[string]string
}

func (b *builds) cleanup() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// buildExample builds ./examples/<name> once per test binary and returns
// the binary's path, named <name> (<name>-static with static: a
// CGO_ENABLED=0 build). The programs of shipsWithNVMLHelper are built as
// they ship, with CGO_ENABLED=0 under their own names, their NVML helper
// nvc-nvml (cgo) next to them. Concurrent callers wait for the one build.
func buildExample(tb testing.TB, name string, static bool) string {
	tb.Helper()
	examples.mu.Lock()
	defer examples.mu.Unlock()
	return examples.build(tb, name, static)
}

// shipsWithNVMLHelper are the programs that ship built without cgo, with
// nvc-nvml beside them for NVML (devices.FindNVMLHelper).
var shipsWithNVMLHelper = map[string]bool{
	"nvidia-container-cli": true, "nvidia-container-runtime-hook": true, "nvidia-container-runtime": true,
}

func (b *builds) build(tb testing.TB, name string, static bool) string {
	tb.Helper()
	key := name
	if shipsWithNVMLHelper[name] {
		b.build(tb, "nvc-nvml", false)
		static = true
	} else if static {
		key += "-static"
	}
	if p, ok := b.built[key]; ok {
		return p
	}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "nvc-e2e-bin-")
		require.NoError(tb, err)
		b.dir, b.built = dir, map[string]string{}
	}
	out := filepath.Join(b.dir, key)
	var env []string
	if static {
		env = append(env, "CGO_ENABLED=0")
	}
	testutil.GoBuild(tb, "..", "./examples/"+name, out, env...)
	b.built[key] = out
	return out
}

// simHost generates a simulated host (nil opts: an 8-GPU DGX A100 in the
// Debian layout) in a temp dir; as root its device nodes are real.
func simHost(tb testing.TB, opts *fakehost.Options) *fakehost.Host {
	tb.Helper()
	o := fakehost.Options{}
	if opts != nil {
		o = *opts
	}
	o.RealNodes = o.RealNodes || os.Geteuid() == 0
	h, err := fakehost.Generate(tb.TempDir(), &o)
	require.NoError(tb, err)
	return h
}

// hostFlags are nvidia-container-cli's global options that point it at a
// simulated host.
func hostFlags(h *fakehost.Host) []string {
	return []string{"--root=" + h.Root, "--proc-root=" + h.ProcRoot, "--dev-root=" + h.DevRoot}
}

// hookConfig writes a config.toml that points the hook (and the runtime
// wrapper) at a simulated host: its driver root, procfs, /dev and sysfs, no
// kernel modules. cli are more [nvidia-container-cli] lines; extra lines
// (other tables) are appended. It returns the file.
func hookConfig(tb testing.TB, h *fakehost.Host, cli []string, extra ...string) string {
	tb.Helper()
	lines := append([]string{
		"[nvidia-container-cli]",
		fmt.Sprintf("root = %q", h.Root),
		"load-kmods = false",
	}, cli...)
	lines = append(lines,
		"[nvc]",
		fmt.Sprintf("proc-root = %q", h.ProcRoot),
		fmt.Sprintf("dev-root = %q", h.DevRoot),
		fmt.Sprintf("sys-root = %q", h.SysRoot),
		"backend = \"procfs\"",
	)
	file := filepath.Join(tb.TempDir(), "config.toml")
	require.NoError(tb, os.WriteFile(file, []byte(strings.Join(append(lines, extra...), "\n")+"\n"), 0o644))
	return file
}

// checkCacheListsLibcuda asks glibc's ldconfig (the peer; its version is
// logged) whether rootfs's etc/ld.so.cache, written by our code in Go,
// lists the x86-64 libcuda.so.1 in dir.
func checkCacheListsLibcuda(tb testing.TB, rootfs, dir string) {
	tb.Helper()
	cache := filepath.Join(rootfs, "etc/ld.so.cache")
	entries := testutil.LdconfigEntries(tb, cache)
	want := "libcuda.so.1 (libc6,x86-64) => " + dir + "/libcuda.so.1"
	assert.Contains(tb, entries, want, "glibc ldconfig -p -C %s lists\n%s", cache, strings.Join(entries, "\n"))
}

// run runs a program and returns its stdout, stderr and exit code (-1
// when it could not be started or was killed).
func run(tb testing.TB, env []string, stdin string, name string, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if code < 0 {
		require.NoError(tb, err, "running %s", name)
	}
	return out.String(), errb.String(), code
}
