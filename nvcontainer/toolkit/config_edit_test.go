package toolkit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// TestSetConfig: each key is set with its type, the file's other keys
// (unknown ones too) are kept, and bad keys and values are refused.
func TestSetConfig(t *testing.T) {
	old := []byte("disable-require = true\n[nvidia-container-cli]\nroot = \"/run/nvidia/driver\"\ncolour = \"blue\"\n")
	out, err := toolkit.SetConfig(old, []string{
		"features.allow-ldconfig-from-container",
		"nvidia-container-cli.load-kmods=false",
		"nvidia-container-runtime.mode=cdi",
		"nvidia-container-runtime.runtimes=crun,runc",
		"nvidia-container-runtime.modes.cdi.spec-dirs=/etc/cdi",
	}, "")
	require.NoError(t, err)
	cfg, err := toolkit.ParseConfig(out)
	require.NoError(t, err)
	assert.True(t, cfg.DisableRequire, "kept: disable-require")
	assert.Equal(t, "/run/nvidia/driver", cfg.CLI.Root, "kept: root")
	assert.Equal(t, []string{"nvidia-container-cli.colour"}, cfg.Unknown, "kept: the unknown key")
	assert.True(t, cfg.Features.AllowLDConfigFromContainer)
	assert.True(t, cfg.CLI.NoLoadKmods)
	assert.Equal(t, "cdi", cfg.Runtime.Mode)
	assert.Equal(t, []string{"crun", "runc"}, cfg.Runtime.Runtimes)
	assert.Equal(t, []string{"/etc/cdi"}, cfg.Runtime.Modes.CDI.SpecDirs)

	again, err := toolkit.SetConfig(out, []string{"nvidia-container-runtime.mode=cdi"}, "")
	require.NoError(t, err)
	assert.Equal(t, string(out), string(again), "a second run changes nothing")

	for _, tc := range []struct{ name, set string }{
		{"unknown", "nvidia-container-cli.colour=red"},
		{"table", "features=true"},
		{"not-bool", "disable-require=maybe"},
		{"string-without-value", "nvidia-container-runtime.mode"},
		{"refused-value", "supported-driver-capabilities=warp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toolkit.SetConfig(old, []string{tc.set}, "")
			assert.ErrorIs(t, err, toolkit.ErrInvalidConfig)
		})
	}
}

// TestDefaultConfigTOML: the default file parses back to DefaultConfig and
// spells out the keys that default to true.
func TestDefaultConfigTOML(t *testing.T) {
	data, err := toolkit.DefaultConfigTOML()
	require.NoError(t, err)
	cfg, err := toolkit.ParseConfig(data)
	require.NoError(t, err)
	assert.Equal(t, toolkit.DefaultConfig(), cfg)
	assert.Contains(t, string(data), "accept-nvidia-visible-devices-envvar-when-unprivileged = true")
	assert.Contains(t, string(data), "load-kmods = true")
}
