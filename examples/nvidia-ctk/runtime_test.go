package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRuntimeConfigureDocker: the file gets the runtime and keeps the
// user's keys and mode; --dry-run prints and writes nothing.
func TestRuntimeConfigureDocker(t *testing.T) {
	file := filepath.Join(t.TempDir(), "daemon.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"debug": true, "runtimes": {"kata": {"path": "/k"}}}`), 0o600))
	t.Run("dry-run", func(t *testing.T) {
		code, out, stderr := ctk(t, "runtime", "configure", "--runtime=docker", "--config", file, "--dry-run", "--set-as-default")
		require.Equal(t, 0, code, stderr)
		assert.JSONEq(t, `{"debug": true, "default-runtime": "nvidia", "runtimes": {"kata": {"path": "/k"}, "nvidia": {"args": [], "path": "nvidia-container-runtime"}}}`, out)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.JSONEq(t, `{"debug": true, "runtimes": {"kata": {"path": "/k"}}}`, string(data), "--dry-run wrote the file")
	})
	t.Run("write", func(t *testing.T) {
		code, out, stderr := ctk(t, "runtime", "configure", "--runtime=docker", "--config", file, "--nvidia-runtime-path=/usr/bin/nvidia-container-runtime", "--cdi.enabled")
		require.Equal(t, 0, code, stderr)
		assert.Empty(t, out)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.JSONEq(t, `{"debug": true, "features": {"cdi": true}, "runtimes": {"kata": {"path": "/k"}, "nvidia": {"args": [], "path": "/usr/bin/nvidia-container-runtime"}}}`, string(data))
		st, err := os.Stat(file)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the file's mode is kept")
	})
	t.Run("new file", func(t *testing.T) {
		newFile := filepath.Join(t.TempDir(), "etc/docker/daemon.json")
		code, _, stderr := ctk(t, "runtime", "configure", "--config", newFile)
		require.Equal(t, 0, code, stderr)
		data, err := os.ReadFile(newFile)
		require.NoError(t, err)
		assert.JSONEq(t, `{"runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}}}`, string(data))
	})
	errs := []struct{ name, content, want string }{
		{"invalid json", "{", "invalid docker daemon config"},
		{"unsupported runtime", "", `unsupported --runtime "crio"`},
	}
	for _, e := range errs {
		t.Run(e.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "daemon.json")
			require.NoError(t, os.WriteFile(bad, []byte(e.content), 0o644))
			rt := "docker"
			if e.content == "" {
				rt = "crio"
			}
			code, _, stderr := ctk(t, "runtime", "configure", "--runtime="+rt, "--config", bad)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, e.want)
			data, _ := os.ReadFile(bad)
			assert.Equal(t, e.content, string(data), "a failed configure changed the file")
		})
	}
}
