package nvc_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smiQ is nvidia-smi -q's layout for the simulated DGX H200 (driver
// 550.54.15, CUDA 12.4, its eight GPUs' bus ids, UUIDs and model).
const smiQ = "testdata/gpu-check/nvidia-smi-q.txt"

// fakeSMI writes an nvidia-smi into a new dir that prints qText for -q and
// the -L lines of its GPUs, or, with broken, fails as nvidia-smi does
// without a driver; it returns the dir.
func fakeSMI(t *testing.T, qText string, broken bool) string {
	t.Helper()
	dir := t.TempDir()
	q := filepath.Join(dir, "q.txt")
	require.NoError(t, os.WriteFile(q, []byte(qText), 0o644))
	script := "#!/bin/sh\ncase $1 in\n-q) cat " + q + " ;;\n-L) echo 'GPU 0: NVIDIA H200 141GB HBM3e (UUID: GPU-1f699acd-cad5-5840-8fd1-c9a98fbbd653)' ;;\nesac\n"
	if broken {
		script = "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755))
	return dir
}

// gpuCheck runs scripts/gpu-check.sh with PATH and the extra environment,
// and returns its exit status and output.
func gpuCheck(t *testing.T, path string, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "scripts/gpu-check.sh")
	cmd.Env = append([]string{"PATH=" + path, "TMPDIR=" + t.TempDir()}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "running gpu-check.sh: %s", out.String())
		return ee.ExitCode(), out.String()
	}
	return 0, out.String()
}

// TestGPUCheckSkips: without nvidia-smi, or with one that cannot reach a
// driver, make gpu-check says it skipped and exits 0.
func TestGPUCheckSkips(t *testing.T) {
	for _, tc := range []struct {
		name, path, want string
	}{
		{"no nvidia-smi", t.TempDir(), "gpu-check: skipped: no NVIDIA GPU (nvidia-smi not found)"},
		{"no driver", fakeSMI(t, "", true), "gpu-check: skipped: no NVIDIA GPU (nvidia-smi -L lists none)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := gpuCheck(t, tc.path)
			assert.Equal(t, 0, code, out)
			assert.Equal(t, tc.want+"\n", out)
		})
	}
}

// TestGPUCheckInfo runs the info step against nvidia-container-cli
// --simulate=dgxh200 with a fake nvidia-smi printing the saved -q text:
// it passes on the same host's text, and fails, showing the difference,
// when a UUID, a model, a minor or the driver version differ.
func TestGPUCheckInfo(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cli := filepath.Join(t.TempDir(), "nvidia-container-cli")
	out, err := exec.Command(goBin, "build", "-o", cli, "./examples/nvidia-container-cli").CombinedOutput()
	require.NoError(t, err, "building nvidia-container-cli: %s", out)
	data, err := os.ReadFile(smiQ)
	require.NoError(t, err)
	saved := string(data)
	for _, tc := range []struct {
		name, from, to string
		want           string // a line of the diff, or of the success message
	}{
		{"same", "", "", "gpu-check: ok: info matches nvidia-smi -q: 8 GPUs, driver 550.54.15, cuda 12.4"},
		{"uuid", "GPU-beb6154c-28f0-57a8-8c81-a411e8dae2e5", "GPU-00000000-28f0-57a8-8c81-a411e8dae2e5",
			"-gpu 00000000:61:00.0 minor=3 uuid=GPU-00000000-28f0-57a8-8c81-a411e8dae2e5 model=NVIDIA H200 141GB HBM3e"},
		{"driver", "Driver Version                            : 550.54.15", "Driver Version                            : 550.54.14", "-driver 550.54.14"},
		{"minor", "Minor Number                          : 7", "Minor Number                          : 9", "-gpu 00000000:df:00.0 minor=9"},
		{"model", "GPU 00000000:1B:00.0\n    Product Name                          : NVIDIA H200 141GB HBM3e",
			"GPU 00000000:1B:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3", "-gpu 00000000:1b:00.0 minor=0 uuid=GPU-1f699acd-cad5-5840-8fd1-c9a98fbbd653 model=NVIDIA H100 80GB HBM3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := saved
			if tc.from != "" {
				require.Equal(t, 1, strings.Count(saved, tc.from), "the saved text has %q once", tc.from)
				text = strings.Replace(saved, tc.from, tc.to, 1)
			}
			code, out := gpuCheck(t, fakeSMI(t, text, false)+":"+os.Getenv("PATH"),
				"GPU_CHECK_STEPS=info", "NVC_CLI="+cli+" --simulate=dgxh200")
			assert.Contains(t, out, tc.want)
			if tc.from == "" {
				assert.Equal(t, 0, code, out)
				assert.Contains(t, out, "gpu-check: passed")
				return
			}
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "gpu-check: FAIL: nvidia-container-cli info differs from nvidia-smi -q")
		})
	}
}
