package toolkit_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// ctkDefault is the file `nvidia-ctk config default` writes (toolkit 1.17),
// the toolkit's config.toml.
const ctkDefault = `#accept-nvidia-visible-devices-as-volume-mounts = false
#accept-nvidia-visible-devices-envvar-when-unprivileged = true
disable-require = false
supported-driver-capabilities = "compat32,compute,display,graphics,ngx,utility,video"
#swarm-resource = "DOCKER_RESOURCE_GPU"

[nvidia-container-cli]
#debug = "/var/log/nvidia-container-toolkit.log"
environment = []
#ldcache = "/etc/ld.so.cache"
ldconfig = "@/sbin/ldconfig"
load-kmods = true
#no-cgroups = false
#path = "/usr/bin/nvidia-container-cli"
#root = "/run/nvidia/driver"
#user = "root:video"

[nvidia-container-runtime]
#debug = "/var/log/nvidia-container-runtime.log"
log-level = "info"
mode = "auto"
runtimes = ["runc", "crun"]

[nvidia-container-runtime.modes]

[nvidia-container-runtime.modes.cdi]
annotation-prefixes = ["cdi.k8s.io/"]
default-kind = "nvidia.com/gpu"
spec-dirs = ["/etc/cdi", "/var/run/cdi"]

[nvidia-container-runtime.modes.csv]
mount-spec-path = "/etc/nvidia-container-runtime/host-files-for-container.d"

[nvidia-container-runtime.modes.legacy]
cuda-compat-mode = "ldconfig"

[nvidia-container-runtime-hook]
path = "nvidia-container-runtime-hook"
skip-mode-detection = false

[nvidia-ctk]
path = "nvidia-ctk"
`

func TestDefaultConfigMatchesCTKDefault(t *testing.T) {
	cfg, err := toolkit.ParseConfig([]byte(ctkDefault))
	require.NoError(t, err)
	assert.Empty(t, cfg.Unknown, "unknown keys in the toolkit's own default")
	assert.Equal(t, toolkit.DefaultConfig(), cfg, "parsed default differs from DefaultConfig")
	d := toolkit.DefaultConfig()
	assert.False(t, d.IgnoreEnvvarUnprivileged, "defaults: IgnoreEnvvarUnprivileged")
	assert.False(t, d.CLI.NoLoadKmods, "defaults: NoLoadKmods")
	assert.Equal(t, "/dev/null", d.Runtime.Debug, "defaults: Runtime.Debug")
	assert.False(t, d.AcceptDeviceListAsVolumeMounts, "defaults: AcceptDeviceListAsVolumeMounts")
}

func TestParseConfig(t *testing.T) {
	cfg, err := toolkit.ParseConfig([]byte(`
accept-nvidia-visible-devices-as-volume-mounts = true
accept-nvidia-visible-devices-envvar-when-unprivileged = false
disable-require = true
supported-driver-capabilities = "compute,utility"
swarm-resource = "DOCKER_RESOURCE_GPU"
colour = "blue"

[nvidia-container-cli]
root = "/run/nvidia/driver"
ldcache = "/etc/ld.so.cache.d"
load-kmods = false
no-cgroups = true
no-pivot = true
user = "root:video"
debug = "/var/log/nvc.log"
ldconfig = "@/sbin/ldconfig.real"
path = "/usr/local/bin/nvidia-container-cli"
environment = ["A=1"]
shoe-size = 44

[nvidia-container-runtime]
runtimes = ["crun"]
debug = "/var/log/rt.log"
log-level = "debug"
mode = "legacy"

[nvidia-container-runtime.modes.legacy]
cuda-compat-mode = "mount"

[nvidia-container-runtime-hook]
path = "/usr/bin/nvidia-container-runtime-hook"

[features]
disable-imex-channel-creation = true

[extra]
x = 1
`))
	require.NoError(t, err)
	want := toolkit.DefaultConfig()
	want.AcceptDeviceListAsVolumeMounts, want.IgnoreEnvvarUnprivileged, want.DisableRequire = true, true, true
	want.SupportedDriverCapabilities, want.SwarmResource = "compute,utility", "DOCKER_RESOURCE_GPU"
	want.CLI = toolkit.CLIConfig{
		Root: "/run/nvidia/driver", Ldcache: "/etc/ld.so.cache.d", NoLoadKmods: true, NoCgroups: true, NoPivot: true, User: "root:video",
		Debug: "/var/log/nvc.log", Ldconfig: "@/sbin/ldconfig.real", Path: "/usr/local/bin/nvidia-container-cli", Environment: []string{"A=1"},
	}
	want.Runtime.Runtimes, want.Runtime.Debug, want.Runtime.LogLevel, want.Runtime.Mode = []string{"crun"}, "/var/log/rt.log", "debug", "legacy"
	want.Runtime.Modes.Legacy.CUDACompatMode = "mount"
	want.Hook.Path = "/usr/bin/nvidia-container-runtime-hook"
	want.Features.DisableIMEXChannelCreation = true
	want.Unknown = []string{"colour", "extra", "extra.x", "nvidia-container-cli.shoe-size"}
	assert.Equal(t, want, cfg)
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ name, toml, want string }{
		{"syntax error names the line", "disable-require = \n", "line 1"},
		{"wrong type names the key", "[nvidia-container-cli]\nload-kmods = \"yes\"\n", "load-kmods"},
		{"unknown capability", `supported-driver-capabilities = "compute,foo"`, `supported-driver-capabilities: parsing driver capabilities "compute,foo": unknown capability "foo"`},
		{"container ldconfig needs the feature", "[nvidia-container-cli]\nldconfig = \"/sbin/ldconfig\"\n", `nvidia-container-cli.ldconfig "/sbin/ldconfig"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := toolkit.ParseConfig([]byte(tt.toml))
			require.ErrorContains(t, err, tt.want, "ParseConfig(%q)", tt.toml)
			assert.Nil(t, cfg, "ParseConfig(%q) config on error", tt.toml)
		})
	}
	t.Run("container ldconfig with the feature", func(t *testing.T) {
		cfg, err := toolkit.ParseConfig([]byte("[nvidia-container-cli]\nldconfig = \"/sbin/ldconfig\"\n[features]\nallow-ldconfig-from-container = true\n"))
		require.NoError(t, err)
		assert.Equal(t, "/sbin/ldconfig", cfg.CLI.Ldconfig)
	})
}

// The hook's lookup order (NVIDIA's runtime hook: the config path).
func TestConfigPath(t *testing.T) {
	tests := []struct {
		name     string
		flag     string
		env      []string
		want     string
		required bool
	}{
		{"flag first", "/a.toml", []string{"NVIDIA_CTK_CONFIG_FILE_PATH=/b.toml", "XDG_CONFIG_HOME=/x"}, "/a.toml", true},
		{"then NVIDIA_CTK_CONFIG_FILE_PATH", "", []string{"NVIDIA_CTK_CONFIG_FILE_PATH=/b.toml", "XDG_CONFIG_HOME=/x"}, "/b.toml", true},
		{"then XDG_CONFIG_HOME", "", []string{"XDG_CONFIG_HOME=/x"}, "/x/nvidia-container-runtime/config.toml", false},
		{"empty values skipped", "", []string{"NVIDIA_CTK_CONFIG_FILE_PATH=", "XDG_CONFIG_HOME="}, toolkit.DefaultConfigPath, false},
		{"else /etc", "", nil, "/etc/nvidia-container-runtime/config.toml", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, req := toolkit.ConfigPath(tt.flag, tt.env)
			assert.Equal(t, tt.want, got, "path")
			assert.Equal(t, tt.required, req, "required")
		})
	}
}

func TestFindConfig(t *testing.T) {
	dir := t.TempDir()
	xdg := filepath.Join(dir, "nvidia-container-runtime")
	require.NoError(t, os.MkdirAll(xdg, 0o755))
	file := filepath.Join(xdg, "config.toml")
	require.NoError(t, os.WriteFile(file, []byte("disable-require = true\n"), 0o644))
	t.Run("XDG config", func(t *testing.T) {
		cfg, from, err := toolkit.FindConfig("", []string{"XDG_CONFIG_HOME=" + dir})
		require.NoError(t, err)
		assert.Equal(t, file, from)
		assert.True(t, cfg.DisableRequire)
	})
	t.Run("missing optional config gives the defaults", func(t *testing.T) {
		cfg, from, err := toolkit.FindConfig("", []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, "missing")})
		require.NoError(t, err)
		assert.Empty(t, from)
		assert.Equal(t, toolkit.DefaultConfig(), cfg)
	})
	t.Run("missing required config", func(t *testing.T) {
		_, _, err := toolkit.FindConfig(filepath.Join(dir, "missing.toml"), nil)
		assert.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("bad config error names the file", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.toml")
		require.NoError(t, os.WriteFile(bad, []byte("load-kmods = ="), 0o644))
		_, _, err := toolkit.FindConfig("", []string{"NVIDIA_CTK_CONFIG_FILE_PATH=" + bad})
		assert.ErrorContains(t, err, bad)
	})
}

func TestNormalizeLDConfigPath(t *testing.T) {
	has := func(paths ...string) func(string) bool {
		return func(p string) bool { return slices.Contains(paths, p) }
	}
	tests := []struct {
		name   string
		in     string
		exists func(string) bool
		want   string
	}{
		{"host ldconfig.real exists", "@/sbin/ldconfig", has("/sbin/ldconfig.real"), "@/sbin/ldconfig.real"},
		{"host ldconfig only", "@/sbin/ldconfig", has(), "@/sbin/ldconfig"},
		{"configured .real missing", "@/sbin/ldconfig.real", has(), "@/sbin/ldconfig"},
		{"no exists func", "@/sbin/ldconfig.real", nil, "@/sbin/ldconfig"},
		{"container path kept", "/sbin/ldconfig", has("/sbin/ldconfig.real"), "/sbin/ldconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, toolkit.NormalizeLDConfigPath(tt.in, tt.exists), "NormalizeLDConfigPath(%q)", tt.in)
		})
	}
}
