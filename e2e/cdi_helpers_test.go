//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// Helpers of the CDI and LD_PRELOAD tests: building the examples, a
// simulated host, a busybox rootfs, a spec in podman's CDI dir and podman
// itself, run with the flags Debian 12 as root without systemd needs
// (cgroupfs manager, file events, vfs storage, no network; see podman below).

// cdiSpecDir is where podman 4.3 reads CDI specs (besides /etc/cdi).
const cdiSpecDir = "/var/run/cdi"

// staticExample builds ./examples/<name> with CGO_ENABLED=0 and checks
// that the binary has no program interpreter: no dynamic loader runs in
// it, so LD_PRELOAD cannot either.
func staticExample(t *testing.T, name string) string {
	t.Helper()
	p := buildExample(t, name, true)
	requireStatic(t, p)
	return p
}

func requireStatic(t *testing.T, file string) {
	t.Helper()
	for _, typ := range []elf.ProgType{elf.PT_INTERP, elf.PT_DYNAMIC} {
		require.False(t, testutil.HasProg(t, file, typ), "%s is dynamically linked (%v): a dynamic loader would honour LD_PRELOAD", file, typ)
	}
}

// cdiHost generates a simulated DGX A100 with real device nodes (major
// 195) in the Fedora layout: its libraries go to /usr/lib64, which neither
// busyboxRootfs's ld.so.conf nor the Debian loader copied into it searches,
// so a program finds libcuda.so.1 there only through the ld.so.cache our
// hook writes.
func cdiHost(t *testing.T) *fakehost.Host {
	t.Helper()
	testutil.RequireRoot(t)
	return simHost(t, &fakehost.Options{Layout: fakehost.Fedora, RealNodes: true})
}

// cdiSpecPath returns a new file name in cdiSpecDir, unique to this test
// run, and removes the file (and the dir, if this made it and it is empty)
// when the test ends.
func cdiSpecPath(t *testing.T, ext string) string {
	t.Helper()
	testutil.RequireRoot(t)
	_, err := os.Stat(cdiSpecDir)
	made := os.IsNotExist(err)
	require.NoError(t, os.MkdirAll(cdiSpecDir, 0o755))
	name := filepath.Join(cdiSpecDir, "nvc-e2e-"+testName(t)+"-"+randomHex()+ext)
	t.Cleanup(func() {
		os.Remove(name)
		if made {
			os.Remove(cdiSpecDir)
		}
	})
	return name
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

func testName(t *testing.T) string {
	return strings.ToLower(unsafeChars.ReplaceAllString(t.Name(), "-"))
}

func randomHex() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// podman runs `podman run --rm` with the flags this machine needs and a
// storage of its own, removed with the test: opts are run options, then
// the rootfs dir (which podman writes into) and the command. It returns
// stdout, stderr and the exit error.
func podman(t *testing.T, runtime string, opts []string, rootfs string, cmd ...string) (string, string, error) {
	t.Helper()
	return podmanGlobal(t, runtime, nil, opts, rootfs, cmd...)
}

// podmanGlobal is podman with global options (--hooks-dir) before run.
func podmanGlobal(t *testing.T, runtime string, global, opts []string, rootfs string, cmd ...string) (string, string, error) {
	t.Helper()
	bin := testutil.RequireCommand(t, "podman")
	store := podmanStore(t)
	args := append(slices.Clone(global),
		"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"),
		"--tmpdir", filepath.Join(store, "tmp"), "--storage-driver", "vfs",
		"--cgroup-manager", "cgroupfs", "--events-backend", "file", "--runtime", runtime,
		"run", "--rm", "--network", "none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
	)
	args = append(append(append(args, opts...), "--rootfs", rootfs), cmd...)
	c := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	return stdout.String(), stderr.String(), err
}

// podmanStore is a short-named temp dir (podman refuses a runroot over 50
// characters), removed when the test ends. conmon's cleanup process may
// still be finishing then, so removal is retried for a while.
func podmanStore(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nvc-pm-")
	require.NoError(t, err)
	t.Cleanup(func() {
		for range 50 {
			if err = os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		assert.NoError(t, err, "removing podman's storage")
	})
	return dir
}

// requirePodman gates on podman and on runtime, the low-level runtime it
// is to run (requireRuntime), and logs the versions of both.
func requirePodman(t *testing.T, runtime string) {
	t.Helper()
	rt := requireRuntime(t, runtime)
	b, _ := exec.Command(testutil.RequireCommand(t, "podman"), "--version").Output()
	t.Logf("peer: %s with %s", strings.TrimSpace(string(b)), rt.version)
}
