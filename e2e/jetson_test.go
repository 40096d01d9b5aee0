//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// simulatedIn finds the generated host's dir a --simulate run names on
// stderr.
var simulatedIn = regexp.MustCompile(`generated in (/\S+?)[,;]`)

// jetsonGoldens are the outputs on --simulate=jetson-orin kept in
// testdata/jetson-<name>.golden, with the generated host's dir written
// $HOST, the rootfs $ROOTFS and the pid $PID.
var jetsonGoldens = []struct {
	name, prog string
	args       []string
}{
	{"info", "nvidia-container-cli", []string{"info"}},
	{"list", "nvidia-container-cli", []string{"list"}},
	{"configure-dry-run", "nvidia-container-cli", []string{"configure", "--dry-run", "--pid=$PID", "--device=all", "$ROOTFS"}},
	{"configure-dry-run-all", "nvidia-container-cli", []string{"configure", "--dry-run", "--pid=$PID", "--device=0", "--no-cgroups",
		"--require=csv-mounts=all", "$ROOTFS"}},
	{"cdi-generate", "nvidia-ctk", []string{"cdi", "generate", "--mode=csv", "--format=json"}},
}

// TestJetsonGolden compares info, list, configure --dry-run and cdi
// generate --mode=csv on the simulated Jetson Orin with testdata (rewrite
// with -update), and checks every listed path against a Jetson generated
// here.
func TestJetsonGolden(t *testing.T) {
	testutil.RequireRoot(t) // the simulated host's nodes are real only for root
	rootfs := t.TempDir()
	pid := strconv.Itoa(os.Getpid())
	for _, tc := range jetsonGoldens {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--simulate=jetson-orin"}
			if tc.prog == "nvidia-ctk" {
				args = append(tc.args[:2:2], append(args, tc.args[2:]...)...)
			} else {
				args = append(args, tc.args...)
			}
			for i, a := range args {
				args[i] = strings.NewReplacer("$PID", pid, "$ROOTFS", rootfs).Replace(a)
			}
			out, stderr, code := run(t, []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir()}, "", buildExample(t, tc.prog, false), args...)
			require.Equal(t, 0, code, "%s %q: exit %d\n%s", tc.prog, args, code, stderr)
			require.Contains(t, stderr, `SIMULATED host "jetson-orin" (Tegra, L4T 36.3.0, CSV mode)`)
			m := simulatedIn.FindStringSubmatch(stderr)
			require.NotNil(t, m, "stderr names no generated dir: %s", stderr)
			out = strings.NewReplacer(m[1], "$HOST", rootfs, "$ROOTFS", `"pid": `+pid, `"pid": $PID`).Replace(out)
			golden(t, filepath.Join("testdata", "jetson-"+tc.name+".golden"), out)
		})
	}
	t.Run("consistency", func(t *testing.T) {
		h, err := fakehost.GenerateTegra(t.TempDir(), &fakehost.TegraOptions{RealNodes: true})
		require.NoError(t, err)
		b, err := os.ReadFile("testdata/jetson-list.golden")
		require.NoError(t, err)
		for _, p := range strings.Fields(string(b)) {
			_, err := os.Lstat(filepath.Join(h.Root, p))
			assert.NoError(t, err, "list names %s, which the simulated Jetson lacks", p)
		}
		b, err = os.ReadFile("testdata/jetson-info.golden")
		require.NoError(t, err)
		assert.Contains(t, string(b), "L4T release:    "+h.Release+"\n")
	})
}

// jetsonProbe is probeScript for the simulated Jetson in CSV mode.
const jetsonProbe = "cd /\n" + probeFunc + `
p nvmap 'busybox ls -l /dev/nvmap'
p ctrl 'busybox ls -l /dev/nvgpu/igpu0/ctrl'
p render 'busybox ls -l /dev/dri/renderD128'
p dbg 'busybox ls /dev/nvhost-dbg-gpu'
p so1 'busybox readlink /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1'
p devlink 'busybox readlink /usr/lib/aarch64-linux-gnu/libcuda.so'
p abslink 'busybox readlink /usr/lib/aarch64-linux-gnu/libnvos.so'
p libcuda 'busybox cat /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1 | busybox md5sum'
p egl 'busybox ls /usr/lib/aarch64-linux-gnu/tegra-egl'
p rel 'busybox head -n 1 /etc/nv_tegra_release'
p infer 'busybox ls /usr/lib/aarch64-linux-gnu/libnvinfer.so.8.6.2'
p cudaprog '/cudaprog; echo "exit $?"'
p open 'busybox cat /dev/nvgpu/igpu0/ctrl'
p nvd 'echo "$NVIDIA_VISIBLE_DEVICES"'
`

// TestRuntimeCSV runs busybox under runc through nvidia-container-runtime
// in csv mode (and auto, which is csv on a Tegra host) on the simulated
// Jetson Orin, and checks from inside: the CSV's device nodes (a
// character device with its numbers, opened past the device cgroup),
// libraries (the host file's bytes), the dir, the release file, the
// links of the sym entries (an absolute one too), libcuda.so.1 found by
// the loader through the ld.so.cache, the extra mount spec only with
// NVIDIA_REQUIRE_JETPACK=csv-mounts=all, and the request voided. The host
// tree and its mounts are unchanged.
func TestRuntimeCSV(t *testing.T) {
	testutil.RequireRoot(t)
	rt := requireRuntime(t, "runc")
	h, err := fakehost.GenerateTegra(t.TempDir(), &fakehost.TegraOptions{RealNodes: true})
	require.NoError(t, err)
	wrapper := buildExample(t, "nvidia-container-runtime", false)
	bin, tmp := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(staticExample(t, "nvidia-cdi-hook"), filepath.Join(bin, "nvidia-cdi-hook")))
	libcuda, err := exec.Command("md5sum", filepath.Join(h.Root, fakehost.TegraLibDir, "libcuda.so.1.1")).Output()
	require.NoError(t, err)
	sum, _, _ := strings.Cut(string(libcuda), " ")

	for _, tt := range []struct {
		name, mode, jetpack string
		all                 bool
	}{
		{"csv", "csv", "", false},
		{"csv-mounts-all", "csv", "csv-mounts=all", true},
		{"auto", "auto", "csv-mounts=base-only", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			config := filepath.Join(t.TempDir(), "config.toml")
			require.NoError(t, os.WriteFile(config, []byte(fmt.Sprintf(`[nvidia-container-cli]
root = %q
load-kmods = false
[nvidia-container-runtime]
mode = %q
runtimes = ["runc"]
[nvidia-container-runtime.modes.csv]
mount-spec-path = %q
`, h.Root, tt.mode, h.SpecDir)), 0o644))
			rootfs := busyboxRootfs(t)
			env := []string{"NVIDIA_VISIBLE_DEVICES=all"}
			if tt.jetpack != "" {
				env = append(env, "NVIDIA_REQUIRE_JETPACK="+tt.jetpack)
			}
			bundle := newBundle(t, rootfs, jetsonProbe, env, &specs.Hooks{})
			hostBefore := container.SnapshotTree(t, h.Root)

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			id := "nvc-e2e-csv-" + tt.name + "-" + randomHex()
			cmd := exec.CommandContext(ctx, wrapper, rt.runArgs(bundle, id)...)
			cmd.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "NVIDIA_CTK_CONFIG_FILE_PATH=" + config, "TMPDIR=" + tmp}
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			exec.Command(rt.path, "--root", rt.state, "delete", "--force", id).Run()
			require.NoError(t, err, "runc through the wrapper in %s mode:\nstdout:\n%s\nstderr:\n%s", tt.mode, out.String(), errb.String())
			t.Logf("container output:\n%s", out.String())

			got := parseProbe(out.String())
			infer := strings.Contains(got["infer"], "No such file")
			if tt.all {
				infer = got["infer"] == "/usr/lib/aarch64-linux-gnu/libnvinfer.so.8.6.2"
			}
			assertProbe(t, got, []probeCheck{
				{"nvmap", regexp.MustCompile(`^c.* 10, +121 `).MatchString(got["nvmap"]), "character device 10:121"},
				{"ctrl", regexp.MustCompile(`^c.* 508, +0 `).MatchString(got["ctrl"]), "character device 508:0"},
				{"render", regexp.MustCompile(`^c.* 226, +128 `).MatchString(got["render"]), "character device 226:128 (a /dev/dri/renderD* pattern)"},
				{"dbg", strings.Contains(got["dbg"], "No such file"), "absent (listed, not on the host)"},
				{"so1", got["so1"] == "libcuda.so.1.1", "a link to libcuda.so.1.1"},
				{"devlink", got["devlink"] == "tegra/libcuda.so", "a link to tegra/libcuda.so"},
				{"abslink", got["abslink"] == fakehost.TegraLibDir+"/libnvos.so", "the absolute link, verbatim"},
				{"libcuda", strings.HasPrefix(got["libcuda"], sum), "the host libcuda.so.1.1's bytes (md5 " + sum + ")"},
				{"egl", got["egl"] == "libEGL_nvidia.so.0", "the tegra-egl dir's file"},
				{"rel", strings.HasPrefix(got["rel"], "# R36 (release), REVISION: 3.0"), "the host's nv_tegra_release"},
				{"infer", infer, fmt.Sprintf("libnvinfer (tensorrt.csv) present only with csv-mounts=all (%v)", tt.all)},
				{"cudaprog", got["cudaprog"] == "exit 0", "exit 0 (libcuda.so.1 found through the ld.so.cache)"},
				{"open", strings.Contains(got["open"], "No such device or address"), "ENXIO: allowed by the device cgroup, no driver behind it"},
				{"nvd", got["nvd"] == "void", "void (the runtime removed the request)"},
			})
			entries := strings.Join(testutil.LdconfigEntries(t, filepath.Join(rootfs, "etc/ld.so.cache")), "\n")
			assert.Contains(t, entries, "libcuda.so.1 (libc6,x86-64) => "+fakehost.TegraLibDir+"/libcuda.so.1")
			spec := readSpec(t, bundle)
			assert.Empty(t, spec.Hooks.Prestart, "the wrapper added a prestart hook in csv mode")
			assert.NotEmpty(t, spec.Hooks.CreateContainer, "no CDI createContainer hook in config.json")
			assert.Empty(t, container.DiffSnapshots(hostBefore, container.SnapshotTree(t, h.Root)), "the simulated Jetson changed")
			assert.Empty(t, testutil.MountsBelow(t, h.Root), "mounts left on the host under the simulated Jetson")
			assert.Empty(t, testutil.MountsBelow(t, rootfs), "mounts left on the host under the rootfs")
		})
	}
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the wrapper left files in its TMPDIR")
}
