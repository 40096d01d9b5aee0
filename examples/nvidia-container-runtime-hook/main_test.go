package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// channels is NVIDIA_IMEX_CHANNELS for n channels from first on.
func channels(first, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(first + i))
	}
	return "NVIDIA_IMEX_CHANNELS=" + b.String()
}

// hookCase is a simulated host, its config (no cgroups: the test
// container shares the test's cgroup) and a test container.
type hookCase struct {
	config string
	ctr    *container.Container
}

func newHookCase(t *testing.T) *hookCase {
	t.Helper()
	testutil.RequireRoot(t) // Apply mounts in the container's namespace
	fh := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{RealNodes: true})
	config := filepath.Join(t.TempDir(), "config.toml")
	toml := fmt.Sprintf("[nvidia-container-cli]\nroot = %q\nload-kmods = false\nno-cgroups = true\n"+
		"[nvc]\nproc-root = %q\ndev-root = %q\nbackend = \"procfs\"\n", fh.Roots.Driver, fh.Roots.Proc, fh.Roots.Dev)
	require.NoError(t, os.WriteFile(config, []byte(toml), 0o644))
	return &hookCase{config: config, ctr: container.Start(t, &container.Options{Spec: `file etc/debian_version "12.5\n"`})}
}

// prestart runs the hook with -debug for a container whose process has
// env, and returns its exit status and log.
func (c *hookCase) prestart(t *testing.T, env ...string) (int, string) {
	t.Helper()
	spec := specs.Spec{Version: "1.0.2", Root: &specs.Root{Path: c.ctr.Rootfs},
		Process: &specs.Process{Args: []string{"sh"}, Env: append([]string{"PATH=/bin"}, env...)}}
	data, err := json.Marshal(spec)
	require.NoError(t, err)
	bundle := testutil.Bundle(t, string(data))
	state := fmt.Sprintf(`{"ociVersion":"1.0.2","id":"c1","status":"created","pid":%d,"bundle":%q}`, c.ctr.PID, bundle)
	var stdout, stderr bytes.Buffer
	code := run([]string{"-config", c.config, "-debug", "prestart"}, strings.NewReader(state), &stdout, &stderr)
	return code, stderr.String()
}

// An image's NVIDIA_IMEX_CHANNELS cannot make the debug log grow with
// it: MaxIMEXChannels channels the host lacks give one summary line (one
// line each before), and all 2^20 channels are refused with one error.
func TestDebugLogBounded(t *testing.T) {
	c := newHookCase(t)
	code, log := c.prestart(t, "NVIDIA_VISIBLE_DEVICES=0", channels(1<<19, request.MaxIMEXChannels))
	lines := strings.Count(log, "\n")
	msg := fmt.Sprintf("%d channels: want exit 0 and a few log lines with one IMEX summary\n%.4000s", request.MaxIMEXChannels, log)
	require.Equal(t, 0, code, msg)
	require.LessOrEqual(t, lines, 20, msg)
	require.LessOrEqual(t, len(log), 8<<10, msg)
	require.Equal(t, 1, strings.Count(log, "missing IMEX channel node"), msg)
	t.Logf("%d channels: %d log lines, %d bytes", request.MaxIMEXChannels, lines, len(log))
	code, log = c.prestart(t, "NVIDIA_VISIBLE_DEVICES=0", channels(0, 1<<20))
	msg = fmt.Sprintf("2^20 channels: want exit 1 and a short error naming NVIDIA_IMEX_CHANNELS\n%.4000s", log)
	assert.Equal(t, 1, code, msg)
	assert.LessOrEqual(t, strings.Count(log, "\n"), 4, msg)
	assert.LessOrEqual(t, len(log), 2<<10, msg)
	assert.Contains(t, log, "NVIDIA_IMEX_CHANNELS", msg)
	t.Logf("2^20 channels: %s", log)
}
