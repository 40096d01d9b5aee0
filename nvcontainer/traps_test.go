package nvcontainer_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/cgroup"
	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/ldcache"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
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
			want, err := request.New(in, nvcontainer.DefaultConfig().RequestOptions())
			if err != nil {
				t.Fatal(err)
			}
			zeroCfg := (&nvcontainer.Config{}).RequestOptions()
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
			defArgs := nvcontainer.CLIArgs(want, nvcontainer.DefaultConfig(), ctr)
			zeroArgs := nvcontainer.CLIArgs(want, &nvcontainer.Config{}, ctr)
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
	cfg, err := nvcontainer.ParseConfig([]byte(`
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
	cfg, err = nvcontainer.ParseConfig([]byte("accept-nvidia-visible-devices-envvar-when-unprivileged = true\n[nvidia-container-cli]\nload-kmods = true\n"))
	if err != nil || cfg.IgnoreEnvvarUnprivileged || cfg.CLI.NoLoadKmods {
		t.Errorf("true keys: %+v, %v", cfg, err)
	}
	if _, err := nvcontainer.ParseConfig([]byte("[nvidia-container-cli]\nload-kmods = \"yes\"\n")); err == nil {
		t.Error("load-kmods of the wrong type: no error")
	}
	var zero nvcontainer.Config
	req, err = request.New(request.Input{Env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all"}}, zero.RequestOptions())
	if err != nil || req.Capabilities != capabilities.All {
		t.Errorf("zero config, all capabilities: %v, %v", req, err)
	}
}

// DefaultCDIHookEnv is a fresh slice each time: a caller changing it
// changes no later spec.
func TestDefaultCDIHookEnvFresh(t *testing.T) {
	env := nvcontainer.DefaultCDIHookEnv()
	env[0] = "LD_PRELOAD=/evil.so"
	if got := nvcontainer.DefaultCDIHookEnv(); !slices.Equal(got, []string{"NVIDIA_CTK_DEBUG=false"}) {
		t.Errorf("DefaultCDIHookEnv after a caller's change = %q", got)
	}
}

// One sentinel per condition: the packages' errors for the same condition
// match each other with errors.Is, and keep their own text.
func TestOneSentinelPerCondition(t *testing.T) {
	tests := []struct {
		name        string
		err, target error
		wantText    string
	}{
		{"driver no version is no driver", driver.ErrNoVersion, devices.ErrNoDriver, "driver version not found"},
		{"driver and devices no driver", driver.ErrNoDriver, devices.ErrNoDriver, "NVIDIA driver not loaded"},
		{"driver not supported", driver.ErrNotSupported, ldcache.ErrNotSupported, "not supported"},
		{"NVML not supported", devices.ErrNVMLNotSupported, ldcache.ErrNotSupported, "not supported by NVML"},
		{"NVML not supported, driver's", devices.ErrNVMLNotSupported, driver.ErrNotSupported, "not supported by NVML"},
		{"mount API not supported", mount.ErrNotSupported, ldcache.ErrNotSupported, "not supported by the kernel"},
		{"openat2 not supported", rootfs.ErrNotSupported, driver.ErrNotSupported, "not supported by the kernel"},
		{"cgroup change not supported", cgroup.ErrNotSupported, ldcache.ErrNotSupported, "device cgroup change not supported"},
		{"permission", nvcontainer.ErrPermission, fs.ErrPermission, "permission denied"},
		{"permission, devices'", devices.ErrPermission, nvcontainer.ErrPermission, "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, tt.target) {
				t.Errorf("errors.Is(%v, %v) = false", tt.err, tt.target)
			}
			if tt.err.Error() != tt.wantText {
				t.Errorf("text %q, want %q", tt.err.Error(), tt.wantText)
			}
		})
	}
}

// NewPlan's error for a relative or "/" rootfs matches ErrInvalidRootfs,
// as ContainerFor's and CLIContainer's do.
func TestNewPlanInvalidRootfs(t *testing.T) {
	h := newTestHost(t, nil)
	for _, rootfs := range []string{"rootfs", "/", "/.."} {
		_, err := nvcontainer.NewPlan(h.host, privReq(t, "NVIDIA_VISIBLE_DEVICES=0"), nvcontainer.Container{Rootfs: rootfs}, nil)
		if !errors.Is(err, nvcontainer.ErrInvalidRootfs) {
			t.Errorf("rootfs %q: %v, want ErrInvalidRootfs", rootfs, err)
		}
	}
}

// State is the package's own type, so go doc shows its fields, and it
// parses as before.
func TestStateIsOwnType(t *testing.T) {
	if pkg := reflect.TypeFor[request.State]().PkgPath(); pkg != "github.com/go-nvc/nvc/nvcontainer/request" {
		t.Errorf("State is defined in %s", pkg)
	}
	st, err := request.ParseState([]byte(`{"ociVersion":"1.0.2","id":"c","status":"creating","pid":7,"bundlePath":"/b","root":"/r","annotations":{"a":"b"}}`))
	want := &request.State{OCIVersion: "1.0.2", ID: "c", Status: "creating", PID: 7, BundlePath: "/b", Root: "/r", Annotations: map[string]string{"a": "b"}}
	if err != nil || !reflect.DeepEqual(st, want) || st.BundleDir() != "/b" {
		t.Errorf("ParseState = %+v, %v; want %+v", st, err, want)
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
	_, _, err = nvcontainer.RequestFromHook(ctx, r, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("RequestFromHook on a silent stdin: %v", err)
	}
}

// An empty capability set means no class in NewCDISpec as in a plan: the
// spec holds the device nodes and no driver file.
func TestNewCDISpecEmptyCaps(t *testing.T) {
	h := newTestHost(t, nil)
	spec, err := nvcontainer.NewCDISpec(h.host, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := nvcontainer.NewPlan(h.host, &request.Request{Devices: request.Devices{Mode: request.DevicesAll}}, nvcontainer.Container{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.CDISpec(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("NewCDISpec(host, 0) differs from the plan of an empty capability set")
	}
	for _, m := range spec.ContainerEdits.Mounts {
		if strings.Contains(m.HostPath, "libcuda") || strings.Contains(m.HostPath, "nvidia-smi") {
			t.Errorf("empty capability set mounts %s", m.HostPath)
		}
	}
}
