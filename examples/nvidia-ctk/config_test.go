package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// TestConfigSet: --set prints the edited file, --in-place writes it back
// keeping the user's keys and mode, a missing file starts from the
// defaults, an unknown key is refused.
func TestConfigSet(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(file, []byte("[nvidia-container-cli]\nroot = \"/run/nvidia/driver\"\n"), 0o600))
	t.Run("stdout", func(t *testing.T) {
		code, out, stderr := ctk(t, "config", "--config-file", file, "--set", "nvidia-container-runtime.mode=cdi")
		require.Equal(t, 0, code, stderr)
		cfg, err := toolkit.ParseConfig([]byte(out))
		require.NoError(t, err)
		assert.Equal(t, "cdi", cfg.Runtime.Mode)
		assert.Equal(t, "/run/nvidia/driver", cfg.CLI.Root)
	})
	t.Run("in-place", func(t *testing.T) {
		code, out, stderr := ctk(t, "config", "-c", file, "-i", "--set", "features.allow-cuda-compat-libs-from-container", "--set", "nvidia-container-cli.load-kmods=false")
		require.Equal(t, 0, code, stderr)
		assert.Empty(t, out)
		cfg, err := toolkit.LoadConfig(file)
		require.NoError(t, err)
		assert.True(t, cfg.Features.AllowCUDACompatLibsFromContainer)
		assert.True(t, cfg.CLI.NoLoadKmods)
		assert.Equal(t, "/run/nvidia/driver", cfg.CLI.Root)
		st, err := os.Stat(file)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the file's mode")
	})
	t.Run("missing-file", func(t *testing.T) {
		code, out, stderr := ctk(t, "config", "-c", filepath.Join(t.TempDir(), "none.toml"), "--set", "nvidia-container-runtime.mode=legacy")
		require.Equal(t, 0, code, stderr)
		cfg, err := toolkit.ParseConfig([]byte(out))
		require.NoError(t, err)
		want := toolkit.DefaultConfig()
		want.Runtime.Mode = "legacy"
		assert.Equal(t, want, cfg)
	})
	t.Run("list", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args []string
			want []string
		}{
			{"colon, as the toolkit", []string{"--config", file, "--set", "nvidia-container-runtime.runtimes=crun:runc"}, []string{"crun", "runc"}},
			{"separator", []string{"-c", file, "--set-list-separator", ",", "--set", "nvidia-container-runtime.runtimes=crun,runc"}, []string{"crun", "runc"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				code, out, stderr := ctk(t, append([]string{"config"}, tc.args...)...)
				require.Equal(t, 0, code, stderr)
				cfg, err := toolkit.ParseConfig([]byte(out))
				require.NoError(t, err)
				assert.Equal(t, tc.want, cfg.Runtime.Runtimes)
			})
		}
	})
	t.Run("unknown-key", func(t *testing.T) {
		code, _, stderr := ctk(t, "config", "-c", file, "--set", "nvidia-container-cli.colour=red")
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, `unknown config key "nvidia-container-cli.colour"`)
	})
}

// TestConfigDefault: config default prints a file that parses to the
// defaults.
func TestConfigDefault(t *testing.T) {
	for _, alias := range []string{"create-default", "generate-default"} {
		code, out, stderr := ctk(t, "config", alias)
		require.Equal(t, 0, code, stderr)
		cfg, err := toolkit.ParseConfig([]byte(out))
		require.NoError(t, err)
		assert.Equal(t, toolkit.DefaultConfig(), cfg, "config %s", alias)
	}
	code, out, stderr := ctk(t, "config", "default")
	require.Equal(t, 0, code, stderr)
	cfg, err := toolkit.ParseConfig([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, toolkit.DefaultConfig(), cfg)
}
