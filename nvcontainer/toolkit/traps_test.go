package toolkit_test

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// A zero Config configures a container as a nil one and DefaultConfig do:
// the zero value is the defaults.
func TestZeroConfigIsDefault(t *testing.T) {
	ctr := nvcontainer.Container{PID: 1234, Rootfs: "/run/b/rootfs"}
	inputs := map[string]request.Input{
		"unprivileged all":      {Env: []string{"NVIDIA_VISIBLE_DEVICES=all"}},
		"unprivileged imex":     {Env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=1"}},
		"privileged caps all":   {Env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all"}, Privileged: true},
		"default capabilities":  {Env: []string{"NVIDIA_VISIBLE_DEVICES=0"}},
		"legacy image":          {Env: []string{"CUDA_VERSION=12.4.1"}},
		"graphics only":         {Env: []string{"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=graphics"}},
		"swarm variable absent": {Env: []string{"DOCKER_RESOURCE_GPU=0"}},
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			want, err := request.New(in, toolkit.DefaultConfig().RequestOptions())
			require.NoError(t, err)
			zeroCfg := (&toolkit.Config{}).RequestOptions()
			for cname, opts := range map[string]*request.Options{"nil": nil, "zero": {}, "zero config": zeroCfg} {
				got, err := request.New(in, opts)
				require.NoError(t, err, "%s config", cname)
				assert.Equal(t, want, got, "%s config: request", cname)
				if name != "swarm variable absent" {
					assert.True(t, got.IsGPU(), "%s config: not a GPU container", cname)
				}
			}
			defArgs := toolkit.CLIArgs(want, toolkit.DefaultConfig(), ctr)
			zeroArgs := toolkit.CLIArgs(want, &toolkit.Config{}, ctr)
			// The zero Ldconfig passes no --ldconfig: nvidia-container-cli's
			// own default is the same host ldconfig.
			defArgs = slices.DeleteFunc(defArgs, func(a string) bool { return a == "--ldconfig=@/sbin/ldconfig" })
			assert.Equal(t, defArgs, zeroArgs, "CLIArgs: zero config against the default")
		})
	}
}

// The toolkit keys that default to true set the negated fields; explicit
// empty values keep the toolkit's meaning.
func TestParseConfigNegatedKeys(t *testing.T) {
	cfg, err := toolkit.ParseConfig([]byte(`
accept-nvidia-visible-devices-envvar-when-unprivileged = false
supported-driver-capabilities = ""
[nvidia-container-cli]
load-kmods = false
[nvidia-container-runtime.modes.legacy]
cuda-compat-mode = ""
`))
	require.NoError(t, err)
	assert.True(t, cfg.IgnoreEnvvarUnprivileged, "negated keys: IgnoreEnvvarUnprivileged")
	assert.True(t, cfg.CLI.NoLoadKmods, "negated keys: NoLoadKmods")
	assert.Empty(t, cfg.Unknown, "negated keys: unknown")
	assert.Equal(t, "none", cfg.SupportedDriverCapabilities, "explicit empty capabilities")
	assert.Equal(t, "none", cfg.Runtime.Modes.Legacy.CUDACompatMode, "explicit empty compat mode")
	req, err := request.New(request.Input{Env: []string{"NVIDIA_VISIBLE_DEVICES=0"}, Privileged: true}, cfg.RequestOptions())
	require.NoError(t, err)
	assert.Zero(t, req.Capabilities, "request: caps, want none")
	assert.Equal(t, request.CompatDisabled, req.CUDACompatMode, "request: compat")

	t.Run("true keys", func(t *testing.T) {
		cfg, err := toolkit.ParseConfig([]byte("accept-nvidia-visible-devices-envvar-when-unprivileged = true\n[nvidia-container-cli]\nload-kmods = true\n"))
		require.NoError(t, err)
		assert.False(t, cfg.IgnoreEnvvarUnprivileged)
		assert.False(t, cfg.CLI.NoLoadKmods)
	})
	t.Run("load-kmods of the wrong type", func(t *testing.T) {
		_, err := toolkit.ParseConfig([]byte("[nvidia-container-cli]\nload-kmods = \"yes\"\n"))
		assert.Error(t, err)
	})
	t.Run("zero config, all capabilities", func(t *testing.T) {
		var zero toolkit.Config
		req, err := request.New(request.Input{Env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all"}}, zero.RequestOptions())
		require.NoError(t, err)
		assert.Equal(t, capabilities.All, req.Capabilities)
	})
}

// A hook whose stdin never ends returns when its context is done.
func TestReadStateContext(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := request.ReadState(ctx, r)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "ReadState on a silent stdin")
	assert.Less(t, time.Since(start), 5*time.Second, "ReadState on a silent stdin returned late")
	_, _, err = toolkit.RequestFromHook(ctx, r, nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "RequestFromHook on a silent stdin")
}
