package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMissingDocker: without docker the wrapper says so and fails.
func TestMissingDocker(t *testing.T) {
	var out, errb strings.Builder
	code := run([]string{"version"}, []string{"NV_DOCKER=/nonexistent/docker"}, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Equal(t, version+"\n", out.String())
	assert.Contains(t, errb.String(), "nvidia-docker: running /nonexistent/docker: ")
}

// TestExec runs the wrapper as a program with a fake docker that prints
// its arguments: the process is replaced, the arguments are the rule's.
func TestExec(t *testing.T) {
	if os.Getenv("NVC_NVIDIA_DOCKER_CHILD") == "1" {
		os.Exit(run(os.Args[len(os.Args)-3:], os.Environ(), os.Stdout, os.Stderr))
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "docker")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho \"$0 $*\"\n"), 0o755))
	cmd := exec.Command(os.Args[0], "-test.run=^TestExec$", "--", "run", "img", "true")
	cmd.Env = append(os.Environ(), "NVC_NVIDIA_DOCKER_CHILD=1", "NV_GPU=0 1", "PATH="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "docker run --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=0,1 img true\n", strings.TrimPrefix(string(out), dir+"/"))
}
