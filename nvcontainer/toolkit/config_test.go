package toolkit_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Unknown) != 0 {
		t.Errorf("unknown keys in the toolkit's own default: %q", cfg.Unknown)
	}
	if !reflect.DeepEqual(cfg, toolkit.DefaultConfig()) {
		t.Errorf("parsed default differs from DefaultConfig:\n got %+v\nwant %+v", cfg, toolkit.DefaultConfig())
	}
	d := toolkit.DefaultConfig()
	if d.IgnoreEnvvarUnprivileged || d.CLI.NoLoadKmods || d.Runtime.Debug != "/dev/null" || d.AcceptDeviceListAsVolumeMounts {
		t.Errorf("defaults differ from nvidia-ctk config default: %+v", d)
	}
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
	if err != nil {
		t.Fatal(err)
	}
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
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("ParseConfig:\n got %+v\nwant %+v", cfg, want)
	}
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
			if err == nil || cfg != nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseConfig(%q) = %v, %v; want error containing %q", tt.toml, cfg, err, tt.want)
			}
		})
	}
	cfg, err := toolkit.ParseConfig([]byte("[nvidia-container-cli]\nldconfig = \"/sbin/ldconfig\"\n[features]\nallow-ldconfig-from-container = true\n"))
	if err != nil || cfg.CLI.Ldconfig != "/sbin/ldconfig" {
		t.Errorf("container ldconfig with the feature: %v", err)
	}
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
		got, req := toolkit.ConfigPath(tt.flag, tt.env)
		if got != tt.want || req != tt.required {
			t.Errorf("%s: ConfigPath = %q, %v; want %q, %v", tt.name, got, req, tt.want, tt.required)
		}
	}
}

func TestFindConfig(t *testing.T) {
	dir := t.TempDir()
	xdg := filepath.Join(dir, "nvidia-container-runtime")
	if err := os.MkdirAll(xdg, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(xdg, "config.toml")
	if err := os.WriteFile(file, []byte("disable-require = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, from, err := toolkit.FindConfig("", []string{"XDG_CONFIG_HOME=" + dir})
	if err != nil || from != file || !cfg.DisableRequire {
		t.Errorf("XDG config: %v, %q, %v", cfg, from, err)
	}
	cfg, from, err = toolkit.FindConfig("", []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, "missing")})
	if err != nil || from != "" || !reflect.DeepEqual(cfg, toolkit.DefaultConfig()) {
		t.Errorf("missing optional config should give the defaults: %v, %q, %v", cfg, from, err)
	}
	_, _, err = toolkit.FindConfig(filepath.Join(dir, "missing.toml"), nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing required config: %v", err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("load-kmods = ="), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := toolkit.FindConfig("", []string{"NVIDIA_CTK_CONFIG_FILE_PATH=" + bad}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad config error should name the file: %v", err)
	}
}

func TestNormalizeLDConfigPath(t *testing.T) {
	has := func(paths ...string) func(string) bool {
		return func(p string) bool { return slices.Contains(paths, p) }
	}
	tests := []struct {
		in     string
		exists func(string) bool
		want   string
	}{
		{"@/sbin/ldconfig", has("/sbin/ldconfig.real"), "@/sbin/ldconfig.real"},
		{"@/sbin/ldconfig", has(), "@/sbin/ldconfig"},
		{"@/sbin/ldconfig.real", has(), "@/sbin/ldconfig"},
		{"@/sbin/ldconfig.real", nil, "@/sbin/ldconfig"},
		{"/sbin/ldconfig", has("/sbin/ldconfig.real"), "/sbin/ldconfig"},
	}
	for _, tt := range tests {
		if got := toolkit.NormalizeLDConfigPath(tt.in, tt.exists); got != tt.want {
			t.Errorf("NormalizeLDConfigPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
