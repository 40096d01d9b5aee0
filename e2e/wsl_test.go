//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// wslHost generates a simulated WSL2 host (fakehost.GenerateWSL) in a temp
// dir; as root its /dev/dxg is a real node.
func wslHost(tb testing.TB) *fakehost.Host {
	tb.Helper()
	h, err := fakehost.GenerateWSL(tb.TempDir(), &fakehost.WSLOptions{RealNodes: os.Geteuid() == 0})
	require.NoError(tb, err)
	return h
}

// simulatedRoot is the host dir --simulate names on stderr.
var simulatedRoot = regexp.MustCompile(`generated in (/[^\s,;]+)`)

// TestWSLGolden compares info, list, configure --dry-run and cdi generate
// --mode=wsl on --simulate=wsl byte for byte with testdata (rewrite with
// -update); the generated host's dir, the rootfs and the pid read as
// $HOST, $ROOTFS and $PID. The goldens with /dev/dxg's device number need
// root (--simulate makes a real node only then).
func TestWSLGolden(t *testing.T) {
	rootfs := busyboxRootfs(t)
	pid := strconv.Itoa(os.Getpid())
	cases := []struct {
		name string
		ctk  bool
		args []string
	}{
		{"wsl-info", false, []string{"info"}},
		{"wsl-list", false, []string{"list"}},
		{"wsl-configure-dry-run", false, []string{"configure", "--dry-run", "--pid=" + pid, "--device=all", "--compute", "--utility", rootfs}},
		{"wsl-cdi-generate", true, []string{"cdi", "generate", "--mode=wsl"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "wsl-info" && tc.name != "wsl-list" {
				testutil.RequireRoot(t) // /dev/dxg's number: a real node as root only
			}
			var out, stderr string
			var code int
			if tc.ctk {
				out, stderr, code = run(t, nil, "", buildExample(t, "nvidia-ctk", false), append(tc.args, "--simulate=wsl")...)
			} else {
				out, stderr, code = cli(t, append([]string{"--simulate=wsl"}, tc.args...)...)
			}
			require.Equal(t, 0, code, "exit %d, stderr %q", code, stderr)
			require.Contains(t, stderr, `SIMULATED host "wsl"`, "want the simulation named")
			m := simulatedRoot.FindStringSubmatch(stderr)
			require.NotNil(t, m, "stderr names no generated host: %q", stderr)
			out = strings.ReplaceAll(out, m[1], "$HOST")
			out = strings.ReplaceAll(out, rootfs, "$ROOTFS")
			out = strings.ReplaceAll(out, `"pid": `+pid, `"pid": $PID`)
			golden(t, filepath.Join("testdata", tc.name+".golden"), out)
		})
	}
}

// wslProbe prints what a container on the WSL host sees.
const wslProbe = "cd /\n" + probeFunc + `
p dxg 'busybox ls -l /dev/dxg'
p opendxg 'busybox cat /dev/dxg'
p nvidia0 'busybox ls /dev/nvidia0'
p smi 'busybox readlink /usr/bin/nvidia-smi'
p smix 'busybox test -x /usr/bin/nvidia-smi && echo executable'
p storecuda 'busybox readlink ` + fakehost.WSLStoreDir + `/libcuda.so.1'
p cubins 'busybox cat ` + fakehost.WSLStoreDir + `/nvcubins.bin'
p dxcore 'busybox ls /usr/lib/x86_64-linux-gnu/libdxcore.so'
p procnv 'busybox ls /proc/driver/nvidia'
p cudaprog '/cudaprog; echo "exit $?"'
`

// TestWSLRunc configures a busybox container under runc on a simulated
// WSL2 host, the way NVIDIA's hook does (nvidia-container-cli configure
// --pid as a prestart hook), and checks from inside: /dev/dxg is the
// host's node and our cgroup rule lets it be opened (ENODEV: no dxgkrnl
// behind it, not EPERM), no /dev/nvidia* and no /proc/driver/nvidia,
// nvidia-smi on PATH as a link into the driver store, the store's
// libcuda.so.1 link and files, and the loader finding libcuda.so.1
// through the cache ours wrote (glibc's ldconfig lists the store's). The
// host's tree and mount table are unchanged afterwards.
func TestWSLRunc(t *testing.T) {
	rt := requireRuntime(t, "runc")
	testutil.RequireRoot(t)
	host := wslHost(t)
	cli := buildExample(t, "nvidia-container-cli", false)
	rootfs := busyboxRootfs(t)
	hostTree := container.SnapshotTree(t, host.Root)
	hostMounts := append(testutil.MountsBelow(t, host.Root), testutil.MountsBelow(t, rootfs)...)
	const script = `pid=$(busybox sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
exec "$@" configure --pid="$pid" --device=all --compute --utility "$ROOTFS"`
	h := specs.Hook{Path: testutil.RequireCommand(t, "busybox"), Args: append([]string{"busybox", "sh", "-c", script, "cli-hook", cli},
		"--root="+host.Root, "--proc-root="+host.ProcRoot, "--dev-root="+host.DevRoot),
		Env: []string{"PATH=/usr/bin:/bin", "ROOTFS=" + rootfs}}
	bundle := newBundle(t, rootfs, wslProbe, nil, &specs.Hooks{Prestart: []specs.Hook{h}})
	out, stderr, code := rt.run(t, bundle, "nvc-wsl-runc", "", "")
	require.Equal(t, 0, code, "runc run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	t.Logf("container output:\n%s", out)
	got := parseProbe(out)
	dxg := regexp.MustCompile(`^c.* ` + strconv.Itoa(fakehost.WSLDXGMajor) + `, +` + strconv.Itoa(fakehost.WSLDXGMinor) + ` .*/dev/dxg$`)
	checks := []struct {
		key  string
		ok   bool
		want string
	}{
		{"dxg", dxg.MatchString(got["dxg"]), "the character device 10:127"},
		{"opendxg", strings.Contains(got["opendxg"], "No such device"), "ENODEV or ENXIO: allowed by our cgroup rule, no dxgkrnl behind it"},
		{"nvidia0", strings.Contains(got["nvidia0"], "No such file"), "absent: WSL has no /dev/nvidia*"},
		{"smi", got["smi"] == fakehost.WSLStoreDir+"/nvidia-smi", "a link to the driver store's nvidia-smi"},
		{"smix", got["smix"] == "executable", "executable through the link"},
		{"storecuda", got["storecuda"] == "libcuda.so.1.1", "the SONAME link to libcuda.so.1.1"},
		{"cubins", got["cubins"] == "fake nvcubins.bin", "the driver store's nvcubins.bin"},
		{"dxcore", got["dxcore"] == "/usr/lib/x86_64-linux-gnu/libdxcore.so", "libdxcore.so in the library dir"},
		{"procnv", strings.Contains(got["procnv"], "No such file"), "absent: WSL has no /proc/driver/nvidia"},
		{"cudaprog", got["cudaprog"] == "exit 0", "exit 0 (the loader found libcuda.so.1)"},
	}
	for _, ck := range checks {
		assert.True(t, ck.ok, "in the container, %s = %q; want %s", ck.key, got[ck.key], ck.want)
	}
	checkCacheListsLibcuda(t, rootfs, fakehost.WSLStoreDir)
	diff := container.DiffSnapshots(hostTree, container.SnapshotTree(t, host.Root))
	assert.Empty(t, diff, "configure changed the WSL host's tree:\n%s", strings.Join(diff, "\n"))
	assert.Equal(t, hostMounts, append(testutil.MountsBelow(t, host.Root), testutil.MountsBelow(t, rootfs)...),
		"configure left mounts on the host below the WSL host or the rootfs")
}
