package toolkit_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"slices"
	"testing"
	"time"

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
			if err != nil {
				t.Fatal(err)
			}
			zeroCfg := (&toolkit.Config{}).RequestOptions()
			for cname, opts := range map[string]*request.Options{"nil": nil, "zero": {}, "zero config": zeroCfg} {
				got, err := request.New(in, opts)
				if err != nil {
					t.Fatalf("%s config: %v", cname, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s config: request\n got %+v\nwant %+v", cname, got, want)
				}
				if !got.IsGPU() && name != "swarm variable absent" {
					t.Errorf("%s config: not a GPU container", cname)
				}
			}
			defArgs := toolkit.CLIArgs(want, toolkit.DefaultConfig(), ctr)
			zeroArgs := toolkit.CLIArgs(want, &toolkit.Config{}, ctr)
			// The zero Ldconfig passes no --ldconfig: nvidia-container-cli's
			// own default is the same host ldconfig.
			defArgs = slices.DeleteFunc(defArgs, func(a string) bool { return a == "--ldconfig=@/sbin/ldconfig" })
			if !slices.Equal(zeroArgs, defArgs) {
				t.Errorf("CLIArgs:\n zero    %q\n default %q", zeroArgs, defArgs)
			}
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
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.IgnoreEnvvarUnprivileged || !cfg.CLI.NoLoadKmods || len(cfg.Unknown) != 0 {
		t.Errorf("negated keys: ignore %v, no-load-kmods %v, unknown %q", cfg.IgnoreEnvvarUnprivileged, cfg.CLI.NoLoadKmods, cfg.Unknown)
	}
	if cfg.SupportedDriverCapabilities != "none" || cfg.Runtime.Modes.Legacy.CUDACompatMode != "none" {
		t.Errorf("explicit empty values: caps %q, compat %q", cfg.SupportedDriverCapabilities, cfg.Runtime.Modes.Legacy.CUDACompatMode)
	}
	req, err := request.New(request.Input{Env: []string{"NVIDIA_VISIBLE_DEVICES=0"}, Privileged: true}, cfg.RequestOptions())
	if err != nil {
		t.Fatal(err)
	}
	if req.Capabilities != 0 || req.CUDACompatMode != request.CompatDisabled {
		t.Errorf("request: caps %v, compat %q; want none, disabled", req.Capabilities, req.CUDACompatMode)
	}
	cfg, err = toolkit.ParseConfig([]byte("accept-nvidia-visible-devices-envvar-when-unprivileged = true\n[nvidia-container-cli]\nload-kmods = true\n"))
	if err != nil || cfg.IgnoreEnvvarUnprivileged || cfg.CLI.NoLoadKmods {
		t.Errorf("true keys: %+v, %v", cfg, err)
	}
	if _, err := toolkit.ParseConfig([]byte("[nvidia-container-cli]\nload-kmods = \"yes\"\n")); err == nil {
		t.Error("load-kmods of the wrong type: no error")
	}
	var zero toolkit.Config
	req, err = request.New(request.Input{Env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all"}}, zero.RequestOptions())
	if err != nil || req.Capabilities != capabilities.All {
		t.Errorf("zero config, all capabilities: %v, %v", req, err)
	}
}

// A hook whose stdin never ends returns when its context is done.
func TestReadStateContext(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := request.ReadState(ctx, r)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("ReadState on a silent stdin: %v after %v; want the context's deadline", err, time.Since(start))
	}
	_, _, err = toolkit.RequestFromHook(ctx, r, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("RequestFromHook on a silent stdin: %v", err)
	}
}
