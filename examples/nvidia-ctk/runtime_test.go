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
	t.Run("toolkit aliases", func(t *testing.T) {
		for _, args := range [][]string{
			{"--runtime-path=/opt/rt", "--nvidia-set-as-default", "--enable-cdi"},
			{"--runtime-path", "/opt/rt", "--nvidia-set-as-default=true", "--cdi.enable"},
		} {
			fresh := filepath.Join(t.TempDir(), "daemon.json")
			code, out, stderr := ctk(t, append([]string{"runtime", "configure", "--config", fresh, "--dry-run"}, args...)...)
			require.Equal(t, 0, code, stderr)
			assert.JSONEq(t, `{"default-runtime": "nvidia", "features": {"cdi": true}, "runtimes": {"nvidia": {"args": [], "path": "/opt/rt"}}}`, out, "%v", args)
		}
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
		{"unsupported runtime", "", `unsupported --runtime "podman"`},
	}
	for _, e := range errs {
		t.Run(e.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "daemon.json")
			require.NoError(t, os.WriteFile(bad, []byte(e.content), 0o644))
			rt := "docker"
			if e.content == "" {
				rt = "podman"
			}
			code, _, stderr := ctk(t, "runtime", "configure", "--runtime="+rt, "--config", bad)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, e.want)
			data, _ := os.ReadFile(bad)
			assert.Equal(t, e.content, string(data), "a failed configure changed the file")
		})
	}
}

// TestRuntimeConfigureContainerd: config.toml gets the runtime in its own
// schema and keeps the user's keys and mode; --dry-run writes nothing; a
// second run changes nothing.
func TestRuntimeConfigureContainerd(t *testing.T) {
	const v3 = "version = 3\n\n[plugins]\n  [plugins.\"io.containerd.cri.v1.images\"]\n    snapshotter = \"overlayfs\"\n"
	file := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(file, []byte(v3), 0o600))
	want := v3 + `  [plugins."io.containerd.cri.v1.runtime"]
    enable_cdi = true
    [plugins."io.containerd.cri.v1.runtime".containerd]
      default_runtime_name = "nvidia"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes]
        [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia]
          runtime_type = "io.containerd.runc.v2"
          [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]
            BinaryName = "/usr/bin/nvidia-container-runtime"
`
	args := []string{"runtime", "configure", "--runtime=containerd", "--config", file, "--set-as-default", "--cdi.enabled",
		"--nvidia-runtime-path=/usr/bin/nvidia-container-runtime"}
	t.Run("dry-run", func(t *testing.T) {
		code, out, stderr := ctk(t, append(args, "--dry-run")...)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, want, out)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, v3, string(data), "--dry-run wrote the file")
	})
	for _, run := range []string{"write", "again"} {
		t.Run(run, func(t *testing.T) {
			code, out, stderr := ctk(t, args...)
			require.Equal(t, 0, code, stderr)
			assert.Empty(t, out)
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, want, string(data))
			st, err := os.Stat(file)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the file's mode is kept")
		})
	}
	t.Run("new file is version 2", func(t *testing.T) {
		newFile := filepath.Join(t.TempDir(), "etc/containerd/config.toml")
		code, _, stderr := ctk(t, "runtime", "configure", "--runtime=containerd", "--config", newFile)
		require.Equal(t, 0, code, stderr)
		data, err := os.ReadFile(newFile)
		require.NoError(t, err)
		assert.Contains(t, string(data), "version = 2\n")
		assert.Contains(t, string(data), `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
            BinaryName = "nvidia-container-runtime"`)
	})
	t.Run("bad file unchanged", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "config.toml")
		require.NoError(t, os.WriteFile(bad, []byte("version = 9\n"), 0o644))
		code, _, stderr := ctk(t, "runtime", "configure", "--runtime=containerd", "--config", bad)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "unsupported version 9")
		data, _ := os.ReadFile(bad)
		assert.Equal(t, "version = 9\n", string(data))
	})
}

// TestRuntimeConfigureCRIO: the drop-in gets the runtime; an existing
// drop-in keeps its keys.
func TestRuntimeConfigureCRIO(t *testing.T) {
	file := filepath.Join(t.TempDir(), "crio.conf.d/99-nvidia.toml")
	code, out, stderr := ctk(t, "runtime", "configure", "--runtime=crio", "--config", file, "--set-as-default", "--dry-run")
	require.Equal(t, 0, code, stderr)
	want := `[crio]
  [crio.runtime]
    default_runtime = "nvidia"
    [crio.runtime.runtimes]
      [crio.runtime.runtimes.nvidia]
        runtime_path = "nvidia-container-runtime"
        runtime_type = "oci"
`
	assert.Equal(t, want, out)
	assert.NoFileExists(t, file, "--dry-run wrote the file")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte("[crio.metrics]\nenable_metrics = true\n"), 0o644))
	code, _, stderr = ctk(t, "runtime", "configure", "--runtime=crio", "--config", file, "--nvidia-runtime-path=/usr/bin/nvidia-container-runtime")
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, `[crio]
  [crio.metrics]
    enable_metrics = true
  [crio.runtime]
    [crio.runtime.runtimes]
      [crio.runtime.runtimes.nvidia]
        runtime_path = "/usr/bin/nvidia-container-runtime"
        runtime_type = "oci"
`, string(data))
}
