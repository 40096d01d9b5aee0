package toolkit_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// The command line the runtime hook would exec (NVIDIA's runtime
// hook, and nvidia-container-cli's own usage line).
func TestCLIArgs(t *testing.T) {
	ctr := nvcontainer.Container{PID: 1234, Rootfs: "/run/b/rootfs"}
	everything := func(c *toolkit.Config) {
		c.CLI = toolkit.CLIConfig{
			Path: "/usr/bin/nvidia-container-cli", Root: "/run/nvidia/driver", NoPivot: true,
			Debug: "/dev/stderr", Ldcache: "/etc/ld.so.cache", User: "root:video", Ldconfig: "@/sbin/ldconfig.real", NoCgroups: true,
		}
		c.Features.DisableIMEXChannelCreation = true
		c.Runtime.Modes.Legacy.CUDACompatMode = "mount"
	}
	tests := []struct {
		name       string
		env        []string
		privileged bool
		cfg        func(*toolkit.Config)
		want       []string
	}{
		{
			name: "default config, a device list",
			env:  []string{"NVIDIA_VISIBLE_DEVICES=1,0", "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470"},
			want: []string{"nvidia-container-cli", "--load-kmods", "configure", "--cuda-compat-mode=ldconfig", "--ldconfig=@/sbin/ldconfig",
				"--device=1,0", "--compute", "--utility", "--require=cuda>=12.4 brand=tesla,driver>=470", "--pid=1234", "/run/b/rootfs"},
		},
		{
			name: "every option, in the documented order", privileged: true, cfg: everything,
			env: []string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=all", "NVIDIA_MIG_CONFIG_DEVICES=all",
				"NVIDIA_MIG_MONITOR_DEVICES=all", "NVIDIA_IMEX_CHANNELS=3,1", "NVIDIA_REQUIRE_B=driver>=550", "NVIDIA_REQUIRE_A=arch>=8.0"},
			want: []string{"/usr/bin/nvidia-container-cli", "--root=/run/nvidia/driver", "--load-kmods", "--no-create-imex-channels", "--no-pivot",
				"--debug=/dev/stderr", "--ldcache=/etc/ld.so.cache", "--user=root:video", "configure",
				"--cuda-compat-mode=mount", "--ldconfig=@/sbin/ldconfig.real", "--no-cgroups", "--device=all",
				"--mig-config=all", "--mig-monitor=all", "--imex-channel=3,1",
				"--compat32", "--compute", "--display", "--graphics", "--ngx", "--utility", "--video",
				"--require=arch>=8.0", "--require=driver>=550", "--pid=1234", "/run/b/rootfs"},
		},
		{
			name: "none: configure without --device",
			env:  []string{"NVIDIA_VISIBLE_DEVICES=none", "NVIDIA_DRIVER_CAPABILITIES=video"},
			cfg: func(c *toolkit.Config) {
				c.CLI.NoLoadKmods, c.CLI.Ldconfig = true, ""
				c.Runtime.Modes.Legacy.CUDACompatMode, c.Features.AllowCUDACompatLibsFromContainer = "none", true
			},
			want: []string{"nvidia-container-cli", "configure", "--video", "--pid=1234", "/run/b/rootfs"},
		},
		{
			name: "disabled requirements are not passed",
			env:  []string{"CUDA_VERSION=12.4", "NVIDIA_DISABLE_REQUIRE=1", "NVIDIA_REQUIRE_X=cuda>=99"},
			cfg:  func(c *toolkit.Config) { c.SupportedDriverCapabilities = "utility" },
			want: []string{"nvidia-container-cli", "--load-kmods", "configure", "--cuda-compat-mode=ldconfig", "--ldconfig=@/sbin/ldconfig",
				"--device=all", "--utility", "--pid=1234", "/run/b/rootfs"},
		},
		{
			name: "legacy image: implicit cuda>= last",
			env:  []string{"CUDA_VERSION=11.8.0", "NVIDIA_REQUIRE_ARCH=arch>=7.0", "NVIDIA_DRIVER_CAPABILITIES=compute"},
			want: []string{"nvidia-container-cli", "--load-kmods", "configure", "--cuda-compat-mode=ldconfig", "--ldconfig=@/sbin/ldconfig",
				"--device=all", "--compute", "--require=arch>=7.0", "--require=cuda>=11.8", "--pid=1234", "/run/b/rootfs"},
		},
		{name: "not a GPU container: nothing to exec", env: []string{"NVIDIA_VISIBLE_DEVICES=void"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := toolkit.DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(cfg)
			}
			req, err := request.New(request.Input{Env: tt.env, Privileged: tt.privileged}, cfg.RequestOptions())
			require.NoError(t, err)
			assert.Equal(t, tt.want, toolkit.CLIArgs(req, cfg, ctr), "CLIArgs")
		})
	}
}

func TestCLIArgsNilConfig(t *testing.T) {
	req := &request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: []string{"GPU-1"}}}
	want := []string{"nvidia-container-cli", "--load-kmods", "configure", "--ldconfig=@/sbin/ldconfig", "--device=GPU-1", "--pid=0", "/r"}
	assert.Equal(t, want, toolkit.CLIArgs(req, nil, nvcontainer.Container{Rootfs: "/r"}), "CLIArgs(nil)")
}

func TestFormatCommand(t *testing.T) {
	args := []string{"nvidia-container-cli", "configure", "--require=cuda>=12.4 brand=tesla", "--device=0,1", "--pid=1", "/r o/o't", ""}
	want := `nvidia-container-cli configure '--require=cuda>=12.4 brand=tesla' --device=0,1 --pid=1 '/r o/o'\''t' ''`
	assert.Equal(t, want, toolkit.FormatCommand(args))
}

// A POSIX shell (the peer) splits FormatCommand's output back into args.
func TestFormatCommandShell(t *testing.T) {
	sh := testutil.RequireCommand(t, "sh")
	args := []string{"nvidia-container-cli", "--require=cuda>=12.4 brand=tesla,driver<471", "it's", `a"b\c$d` + "`e`", "*", "~x", "", "tab\there\nnl"}
	script := `for a in "$@"; do printf '%s\0' "$a"; done`
	out, err := exec.Command(sh, "-c", "set -- "+toolkit.FormatCommand(args)+"; "+script).Output()
	require.NoError(t, err)
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	assert.Equal(t, args, got, "shell split")
}
