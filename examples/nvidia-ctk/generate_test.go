package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// TestGenerateWarnings checks that cdi generate prints the warnings of the
// plan the spec is written from (driver files the host lacks) to stderr,
// each once, and nothing of them to stdout.
func TestGenerateWarnings(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, nil)
	host, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Root: h.Root, ProcRoot: h.ProcRoot, DevRoot: h.DevRoot}, "")
	if err != nil {
		t.Fatal(err)
	}
	req := &nvcontainer.Request{Devices: nvcontainer.Devices{Mode: nvcontainer.DevicesAll}, Capabilities: capabilities.All}
	plan, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Warnings) == 0 {
		t.Fatal("the generated host gives no warnings to check")
	}
	code, stdout, stderr := ctk(t, "cdi", "generate", "--driver-root", h.Root, "--proc-root", h.ProcRoot)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range plan.Warnings {
		line := "nvidia-ctk: warning: " + w + "\n"
		if n := strings.Count(stderr, line); n != 1 {
			t.Errorf("stderr has %q %d times, want once", line, n)
		}
		if strings.Contains(stdout, w) {
			t.Errorf("stdout has warning %q", w)
		}
	}
}

// TestGenerateMIGWithoutCapsMajor checks that cdi generate fails, naming
// the MIG device and nvidia-caps, on a host whose /proc/devices lists no
// nvidia-caps major, rather than writing MIG devices without their access
// nodes.
func TestGenerateMIGWithoutCapsMajor(t *testing.T) {
	h := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{MIG: map[int][]string{1: {"3g.20gb"}}})
	file := filepath.Join(h.ProcRoot, "devices")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(data)) {
		if f := strings.Fields(l); len(f) != 2 || f[1] != "nvidia-caps" {
			lines = append(lines, l)
		}
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := ctk(t, "cdi", "generate", "--driver-root", h.Root, "--proc-root", h.ProcRoot)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "1:0") || !strings.Contains(stderr, "nvidia-caps") {
		t.Errorf("exit %d, stdout %.80q, stderr %q; want 1, nothing, an error naming 1:0 and nvidia-caps", code, stdout, stderr)
	}
}
