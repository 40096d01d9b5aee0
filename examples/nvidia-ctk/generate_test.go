package main

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// TestGenerateWarnings checks that cdi generate prints the warnings of the
// plan the spec is written from (driver files the host lacks) to stderr,
// each once, and nothing of them to stdout.
func TestGenerateWarnings(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, nil)
	host, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Roots: h.Roots, ToolkitLibraries: true}, "")
	require.NoError(t, err)
	req := &request.Request{Devices: request.Devices{Mode: request.DevicesAll}, Capabilities: capabilities.All}
	plan, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, plan.Warnings, "the generated host gives no warnings to check")
	code, stdout, stderr := ctk(t, "cdi", "generate", "--driver-root", h.Roots.Driver, "--proc-root", h.Roots.Proc)
	require.Equal(t, 0, code, "exit status: %s", stderr)
	for _, w := range plan.Warnings {
		line := "nvidia-ctk: warning: " + w + "\n"
		assert.Equal(t, 1, strings.Count(stderr, line), "stderr has %q this many times, want once", line)
		assert.NotContains(t, stdout, w, "stdout has a warning")
	}
}

// TestGenerateMIGWithoutCapsMajor checks that cdi generate fails, naming
// the MIG device and nvidia-caps, on a host whose /proc/devices lists no
// nvidia-caps major, rather than writing MIG devices without their access
// nodes.
func TestGenerateMIGWithoutCapsMajor(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{MIG: map[int][]string{1: {"3g.20gb"}}})
	file := filepath.Join(h.Roots.Proc, "devices")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var lines []string
	for l := range strings.Lines(string(data)) {
		if f := strings.Fields(l); len(f) != 2 || f[1] != "nvidia-caps" {
			lines = append(lines, l)
		}
	}
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "")), 0o644))
	code, stdout, stderr := ctk(t, "cdi", "generate", "--driver-root", h.Roots.Driver, "--proc-root", h.Roots.Proc)
	msg := "want exit 1, nothing on stdout, an error naming 1:0 and nvidia-caps"
	assert.Equal(t, 1, code, msg)
	assert.Empty(t, stdout, msg)
	assert.Contains(t, stderr, "1:0", msg)
	assert.Contains(t, stderr, "nvidia-caps", msg)
}

// TestGenerateToolkitLibraries checks that cdi generate finds what the
// NVIDIA Container Toolkit's discovery finds outside the loader cache:
// libvdpau_nvidia.so.<version> in the vdpau/ dir, and, on a driver root
// without /etc/ld.so.cache, the libraries of the standard dirs instead of
// an error.
func TestGenerateToolkitLibraries(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, nil)
	vdpau := path.Join(h.LibDir, "vdpau", "libvdpau_nvidia.so."+h.DriverVersion)
	libcuda := path.Join(h.LibDir, "libcuda.so."+h.DriverVersion)
	for _, noCache := range []bool{false, true} {
		t.Run(map[bool]string{false: "cache", true: "no-cache"}[noCache], func(t *testing.T) {
			if noCache {
				require.NoError(t, os.Remove(filepath.Join(h.Roots.Driver, "etc/ld.so.cache")))
			}
			code, stdout, stderr := ctk(t, "cdi", "generate", "--driver-root", h.Roots.Driver, "--proc-root", h.Roots.Proc, "--format", "json")
			require.Equal(t, 0, code, "exit status: %s", stderr)
			var spec specs.Spec
			require.NoError(t, json.Unmarshal([]byte(stdout), &spec))
			var paths []string
			for _, m := range spec.ContainerEdits.Mounts {
				paths = append(paths, m.ContainerPath)
			}
			assert.Contains(t, paths, vdpau)
			assert.Contains(t, paths, libcuda)
		})
	}
}
