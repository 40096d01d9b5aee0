package request_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/nvcontainer/request"
)

// reqCase is one row of the runtime-hook rule table.
type reqCase struct {
	rule       string // the runtime hook's rule this row checks
	env        []string
	privileged bool
	mounts     []specs.Mount
	cfg        func(*request.Options)

	devices string   // request.Devices.String(): void, none, all, or the list
	caps    string   // Capabilities.String()
	reqs    []string // Requirements
	disable bool
	migCfg  string
	migMon  string
	imex    []uint32
	notes   int    // number of Notes
	err     string // substring of the error; "" for success
}

func devNull(dst string) specs.Mount {
	return specs.Mount{Source: "/dev/null", Destination: dst, Type: "bind"}
}

// TestRequestFromEnvRules checks every environment rule of NVIDIA's runtime hook.
func TestRequestFromEnvRules(t *testing.T) {
	const cu = "compute,utility"
	const all = "compat32,compute,display,graphics,ngx,utility,video"
	legacy := []string{"CUDA_VERSION=12.4.1"}
	acceptMounts := func(c *request.Options) { c.AcceptDeviceListAsVolumeMounts = true }
	rejectEnv := func(c *request.Options) { c.IgnoreEnvvarUnprivileged = true }
	tests := []reqCase{
		// Device selection: value parsing.
		{rule: "NVD unset, not legacy: not a GPU container", devices: "void"},
		{rule: "NVD empty: not a GPU container", env: []string{"NVIDIA_VISIBLE_DEVICES="}, devices: "void"},
		{rule: "NVD only commas and spaces: empty result is void", env: []string{"NVIDIA_VISIBLE_DEVICES= , ,"}, devices: "void"},
		{rule: "NVD void", env: []string{"NVIDIA_VISIBLE_DEVICES=void"}, devices: "void"},
		{rule: "any item void is void: 0,void", env: []string{"NVIDIA_VISIBLE_DEVICES=0,void"}, devices: "void"},
		{rule: "void beats all", env: []string{"NVIDIA_VISIBLE_DEVICES=all,void"}, devices: "void"},
		{rule: "NVD all", env: []string{"NVIDIA_VISIBLE_DEVICES=all"}, devices: "all", caps: cu},
		{rule: "any item all is all: all,0", env: []string{"NVIDIA_VISIBLE_DEVICES=all,0"}, devices: "all", caps: cu},
		{rule: "all beats none", env: []string{"NVIDIA_VISIBLE_DEVICES=none,all"}, devices: "all", caps: cu},
		{rule: "none: GPU container without devices", env: []string{"NVIDIA_VISIBLE_DEVICES=none"}, devices: "none", caps: cu},
		{rule: "none beats a list", env: []string{"NVIDIA_VISIBLE_DEVICES=0,none"}, devices: "none", caps: cu},
		{rule: "items split on commas and trimmed", env: []string{"NVIDIA_VISIBLE_DEVICES= 0 , 1 "}, devices: "0,1", caps: cu},
		{rule: "duplicates removed in first-seen order ( 1 ,0,1,,2)", env: []string{"NVIDIA_VISIBLE_DEVICES= 1 ,0,1,,2"}, devices: "1,0,2", caps: cu},
		{rule: "IDs passed verbatim: index, MIG pair, UUIDs, CDI name",
			env:     []string{"NVIDIA_VISIBLE_DEVICES=0,0:1,GPU-8a6f,MIG-5c1e,MIG-GPU-8a6f/1/0,nvidia.com/gpu=0,00000000:3b:00.0"},
			devices: "0,0:1,GPU-8a6f,MIG-5c1e,MIG-GPU-8a6f/1/0,nvidia.com/gpu=0,00000000:3b:00.0", caps: cu},
		{rule: "an ID with a space is refused, naming variable and value", env: []string{"NVIDIA_VISIBLE_DEVICES=0,1 2"},
			err: `reading NVIDIA_VISIBLE_DEVICES: parsing device list "0,1 2": device "1 2"`},
		{rule: "later env entry wins (the runtime appends NVD=void)", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_VISIBLE_DEVICES=void"}, devices: "void"},
		{rule: "env entry without = is an error", env: []string{"NVIDIA_VISIBLE_DEVICES"}, err: `parsing environment entry 0 "NVIDIA_VISIBLE_DEVICES": no "="`},
		// Legacy images.
		{rule: "legacy image, NVD unset: all", env: legacy, devices: "all", caps: all, reqs: []string{"cuda>=12.4"}},
		{rule: "legacy image, NVD empty: void", env: append([]string{"NVIDIA_VISIBLE_DEVICES="}, legacy...), devices: "void"},
		{rule: "NVIDIA_REQUIRE_CUDA set: not legacy", env: []string{"CUDA_VERSION=12.4.1", "NVIDIA_REQUIRE_CUDA=cuda>=12.4"}, devices: "void"},
		{rule: "NVIDIA_REQUIRE_CUDA empty: still legacy", env: []string{"CUDA_VERSION=12.4.1", "NVIDIA_REQUIRE_CUDA="},
			devices: "all", caps: all, reqs: []string{"", "cuda>=12.4"}},
		{rule: "legacy CUDA_VERSION without minor gives X.0", env: []string{"CUDA_VERSION=11"}, devices: "all", caps: all, reqs: []string{"cuda>=11.0"}},
		{rule: "legacy CUDA_VERSION with v prefix and prerelease", env: []string{"CUDA_VERSION=v12.2.0-rc.1+b7"}, devices: "all", caps: all, reqs: []string{"cuda>=12.2"}},
		{rule: "invalid CUDA_VERSION is fatal (abc)", env: []string{"CUDA_VERSION=abc"}, err: `reading CUDA_VERSION "abc": not a semantic version`},
		{rule: "invalid CUDA_VERSION: leading zero", env: []string{"CUDA_VERSION=012.1"}, err: `reading CUDA_VERSION "012.1"`},
		{rule: "invalid CUDA_VERSION ignored when not a GPU container", env: []string{"CUDA_VERSION=abc", "NVIDIA_VISIBLE_DEVICES=void"}, devices: "void"},
		{rule: "invalid CUDA_VERSION ignored with NVIDIA_DISABLE_REQUIRE", env: []string{"CUDA_VERSION=abc", "NVIDIA_DISABLE_REQUIRE=true"},
			devices: "all", caps: all, disable: true},
		// NV_GPU, nvidia-docker's variable.
		{rule: "NV_GPU used when NVD absent", env: []string{"NV_GPU=1,0"}, devices: "1,0", caps: cu},
		{rule: "NV_GPU space-separated", env: []string{"NV_GPU=0 1"}, devices: "0,1", caps: cu},
		{rule: "NV_GPU ignored when NVD present, even empty", env: []string{"NV_GPU=0", "NVIDIA_VISIBLE_DEVICES="}, devices: "void"},
		{rule: "NV_GPU counts as set on a legacy image", env: append([]string{"NV_GPU=2"}, legacy...), devices: "2", caps: all, reqs: []string{"cuda>=12.4"}},
		// Swarm resources.
		{rule: "swarm variable used when present", env: []string{"DOCKER_RESOURCE_GPU=GPU-1", "NVIDIA_VISIBLE_DEVICES=all"},
			cfg: func(c *request.Options) { c.SwarmResource = "DOCKER_RESOURCE_GPU" }, devices: "GPU-1", caps: cu},
		{rule: "swarm variables concatenated in configured order",
			env: []string{"B=1", "A=0,1"}, cfg: func(c *request.Options) { c.SwarmResource = " A, ,B" }, devices: "0,1", caps: cu},
		{rule: "swarm variables absent: NVD used", env: []string{"NVIDIA_VISIBLE_DEVICES=3"},
			cfg: func(c *request.Options) { c.SwarmResource = "DOCKER_RESOURCE_GPU" }, devices: "3", caps: cu},
		// Privilege and accept-nvidia-visible-devices-envvar-when-unprivileged.
		{rule: "env honoured unprivileged by default", env: []string{"NVIDIA_VISIBLE_DEVICES=0"}, devices: "0", caps: cu},
		{rule: "env ignored unprivileged when not accepted", env: []string{"NVIDIA_VISIBLE_DEVICES=0"}, cfg: rejectEnv, devices: "void", notes: 1},
		{rule: "legacy all ignored unprivileged when not accepted", env: legacy, cfg: rejectEnv, devices: "void", notes: 1},
		{rule: "env honoured privileged when not accepted", env: []string{"NVIDIA_VISIBLE_DEVICES=0"}, privileged: true, cfg: rejectEnv, devices: "0", caps: cu},
		// Volume mounts.
		{rule: "volume mounts ignored unless enabled", env: []string{"NVIDIA_VISIBLE_DEVICES=1"},
			mounts: []specs.Mount{devNull("/var/run/nvidia-container-devices/0")}, devices: "1", caps: cu},
		{rule: "volume mounts preferred over env when enabled", env: []string{"NVIDIA_VISIBLE_DEVICES=1"}, cfg: acceptMounts,
			mounts:  []specs.Mount{devNull("/var/run/nvidia-container-devices/0"), devNull("/var/run/nvidia-container-devices/GPU-9/")},
			devices: "0,GPU-9", caps: cu},
		{rule: "volume mounts bypass the unprivileged rule", cfg: func(c *request.Options) { acceptMounts(c); rejectEnv(c) },
			mounts: []specs.Mount{devNull("/var/run/nvidia-container-devices/all")}, devices: "all", caps: cu},
		{rule: "only /dev/null sources count; destination must be below the root", env: []string{"NVIDIA_VISIBLE_DEVICES=1"}, cfg: acceptMounts,
			mounts: []specs.Mount{
				{Source: "/dev/zero", Destination: "/var/run/nvidia-container-devices/0"},
				devNull("/var/run/nvidia-container-devicesX/0"),
				devNull("/var/run/nvidia-container-devices"),
			}, devices: "1", caps: cu},
		{rule: "same destination counted once", cfg: acceptMounts,
			mounts:  []specs.Mount{devNull("/var/run/nvidia-container-devices/0"), devNull("/var/run//nvidia-container-devices/0/")},
			devices: "0", caps: cu},
		{rule: "cdi/<vendor>/<class>/<dev> and cdi/<vendor>/<class>=<dev> are CDI names", cfg: acceptMounts,
			mounts: []specs.Mount{
				devNull("/var/run/nvidia-container-devices/cdi/nvidia.com/gpu/0"),
				devNull("/var/run/nvidia-container-devices/cdi/nvidia.com/gpu=1"),
				devNull("/var/run/nvidia-container-devices/cdi/bogus"),
			}, devices: "nvidia.com/gpu=0,nvidia.com/gpu=1", caps: cu, notes: 1},
		{rule: "imex/<ch> mounts are IMEX channels and preferred", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=7"}, cfg: acceptMounts,
			mounts:  []specs.Mount{devNull("/var/run/nvidia-container-devices/imex/3"), devNull("/var/run/nvidia-container-devices/imex/1")},
			devices: "0", caps: cu, imex: []uint32{3, 1}},
		// NVIDIA_DRIVER_CAPABILITIES.
		{rule: "caps unset: compute,utility", env: []string{"NVIDIA_VISIBLE_DEVICES=0"}, devices: "0", caps: cu},
		{rule: "caps empty: the default", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES="}, devices: "0", caps: cu},
		{rule: "caps empty on a legacy image: the default, not all", env: append([]string{"NVIDIA_DRIVER_CAPABILITIES="}, legacy...),
			devices: "all", caps: cu, reqs: []string{"cuda>=12.4"}},
		{rule: "caps list split and trimmed", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES= video, graphics "}, devices: "0", caps: "graphics,video"},
		{rule: "caps all: every supported class", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all"}, devices: "0", caps: all},
		{rule: "caps all,foo accepted as all", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all,foo"}, devices: "0", caps: all},
		{rule: "caps unknown word is an error naming it", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,foo"},
			err: `reading NVIDIA_DRIVER_CAPABILITIES: parsing driver capabilities "compute,foo": unknown capability "foo"`},
		{rule: "caps none is not accepted", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=none"}, err: `unknown capability "none"`},
		{rule: "supported set limits the default", env: []string{"NVIDIA_VISIBLE_DEVICES=0"},
			cfg: func(c *request.Options) { c.SupportedDriverCapabilities = "utility,video" }, devices: "0", caps: "utility"},
		{rule: "supported set limits all", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all"},
			cfg: func(c *request.Options) { c.SupportedDriverCapabilities = "utility,video" }, devices: "0", caps: "utility,video"},
		{rule: "supported set is all of a legacy image's unset caps", env: legacy,
			cfg: func(c *request.Options) { c.SupportedDriverCapabilities = "compute,ngx" }, devices: "all", caps: "compute,ngx", reqs: []string{"cuda>=12.4"}},
		{rule: "caps outside the supported set are an error", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,video"},
			cfg: func(c *request.Options) { c.SupportedDriverCapabilities = "compute,utility" },
			err: `reading NVIDIA_DRIVER_CAPABILITIES: capabilities "video" in "compute,video" are not in supported-driver-capabilities "compute,utility"`},
		{rule: "supported-driver-capabilities all", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=ngx"},
			cfg: func(c *request.Options) { c.SupportedDriverCapabilities = "all" }, devices: "0", caps: "ngx"},
		// NVIDIA_REQUIRE_*.
		{rule: "every NVIDIA_REQUIRE_* in sorted key order, JETPACK excluded",
			env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_Z=driver>=470", "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471",
				"NVIDIA_REQUIRE_ARCH=arch>=7.0", "NVIDIA_REQUIRE_JETPACK=csv-mounts=all", "NVIDIA_REQUIRE_JETPACK_HOST_MOUNTS=x"},
			devices: "0", caps: cu, reqs: []string{"arch>=7.0", "cuda>=12.4 brand=tesla,driver>=470,driver<471", "driver>=470"}},
		{rule: "requirements passed unparsed", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_X=not a valid one"},
			devices: "0", caps: cu, reqs: []string{"not a valid one"}},
		// NVIDIA_DISABLE_REQUIRE.
		{rule: "disable-require true drops all, legacy included", env: append([]string{"NVIDIA_DISABLE_REQUIRE=true", "NVIDIA_REQUIRE_X=cuda>=99"}, legacy...),
			devices: "all", caps: all, disable: true},
		{rule: "disable-require 1", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DISABLE_REQUIRE=1", "NVIDIA_REQUIRE_X=cuda>=99"}, devices: "0", caps: cu, disable: true},
		{rule: "disable-require TRUE", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DISABLE_REQUIRE=TRUE"}, devices: "0", caps: cu, disable: true},
		{rule: "disable-require t", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DISABLE_REQUIRE=t"}, devices: "0", caps: cu, disable: true},
		{rule: "disable-require yes is false (strconv.ParseBool)", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DISABLE_REQUIRE=yes", "NVIDIA_REQUIRE_X=cuda>=99"},
			devices: "0", caps: cu, reqs: []string{"cuda>=99"}},
		{rule: "config disable-require forces it", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DISABLE_REQUIRE=false", "NVIDIA_REQUIRE_X=cuda>=99"},
			cfg: func(c *request.Options) { c.DisableRequire = true }, devices: "0", caps: cu, disable: true},
		// NVIDIA_MIG_CONFIG_DEVICES / NVIDIA_MIG_MONITOR_DEVICES.
		{rule: "MIG config and monitor passed raw when privileged",
			env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES=all", "NVIDIA_MIG_MONITOR_DEVICES=0,1"}, privileged: true,
			devices: "0", caps: cu, migCfg: "all", migMon: "0,1"},
		{rule: "MIG config refused unprivileged", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES=all"},
			err: `reading NVIDIA_MIG_CONFIG_DEVICES "all": not allowed in an unprivileged container`},
		{rule: "MIG monitor refused unprivileged", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_MONITOR_DEVICES=all"},
			err: `reading NVIDIA_MIG_MONITOR_DEVICES "all": not allowed`},
		{rule: "empty MIG value ignored unprivileged", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES="}, devices: "0", caps: cu},
		{rule: "MIG not checked for non-GPU containers", env: []string{"NVIDIA_MIG_CONFIG_DEVICES=all"}, devices: "void"},
		// NVIDIA_IMEX_CHANNELS.
		{rule: "IMEX list parsed like devices", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS= 2,0,2,,"}, devices: "0", caps: cu, imex: []uint32{2, 0}},
		{rule: "IMEX all means no explicit channels", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=all"}, devices: "0", caps: cu},
		{rule: "IMEX none and void mean none", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=none"}, devices: "0", caps: cu},
		{rule: "IMEX channel must be decimal below 2^20", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=1,1048576"},
			err: `reading NVIDIA_IMEX_CHANNELS: parsing IMEX channel list "1,1048576": channel "1048576": not a decimal number below 1048576`},
		{rule: "IMEX ignored unprivileged when env not accepted", env: []string{"NVIDIA_IMEX_CHANNELS=1"},
			cfg:    func(c *request.Options) { acceptMounts(c); rejectEnv(c) },
			mounts: []specs.Mount{devNull("/var/run/nvidia-container-devices/0")}, devices: "0", caps: cu, notes: 1},
		{rule: "IMEX ignored with ignore-imex-channel-requests", env: []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=1"},
			cfg: func(c *request.Options) { c.IgnoreIMEXChannelRequests = true }, devices: "0", caps: cu},
		{rule: "IMEX only for GPU containers", env: []string{"NVIDIA_IMEX_CHANNELS=1"}, devices: "void"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) { tt.check(t) })
	}
}

func (tt reqCase) check(t *testing.T) {
	t.Helper()
	cfg := &request.Options{}
	if tt.cfg != nil {
		tt.cfg(cfg)
	}
	req, err := request.New(request.Input{Env: tt.env, Mounts: tt.mounts, Privileged: tt.privileged}, cfg)
	if tt.err != "" {
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Fatalf("error = %v, want one containing %q", err, tt.err)
		}
		if req != nil {
			t.Errorf("request %+v returned with error", req)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	got := []string{req.Devices.String(), req.Capabilities.String(), req.MIGConfig, req.MIGMonitor}
	want := []string{tt.devices, tt.caps, tt.migCfg, tt.migMon}
	if !slices.Equal(got, want) {
		t.Errorf("devices, caps, mig-config, mig-monitor = %q, want %q", got, want)
	}
	if !slices.Equal(req.Requirements, tt.reqs) || req.DisableRequire != tt.disable {
		t.Errorf("requirements = %q (disabled %v), want %q (disabled %v)", req.Requirements, req.DisableRequire, tt.reqs, tt.disable)
	}
	if !slices.Equal(req.IMEXChannels, tt.imex) {
		t.Errorf("IMEX channels = %v, want %v", req.IMEXChannels, tt.imex)
	}
	if len(req.Notes) != tt.notes {
		t.Errorf("notes = %q, want %d", req.Notes, tt.notes)
	}
	if req.IsGPU() != (tt.devices != "void") {
		t.Errorf("IsGPU() = %v for devices %q", req.IsGPU(), tt.devices)
	}
}

// CUDA compat mode from [nvidia-container-runtime.modes.legacy]
// cuda-compat-mode (as the runtime hook passes it).
func TestRequestCUDACompatMode(t *testing.T) {
	tests := []struct {
		mode  string
		allow bool
		want  request.CUDACompatMode
	}{
		{"ldconfig", false, request.CompatLdconfig}, // the default config value
		{"mount", false, request.CompatMount},
		{"disabled", false, request.CompatDisabled},
		{"hook", false, request.CompatDisabled},
		{"hook", true, request.CompatDisabled},
		{"", false, request.CompatLdconfig},     // the zero value is the default
		{"none", false, request.CompatDisabled}, // the file's explicit ""
		{"none", true, request.CompatDefault},
		{"bogus", true, request.CompatDefault},
	}
	for _, tt := range tests {
		cfg := &request.Options{}
		cfg.CUDACompatMode = tt.mode
		cfg.AllowCUDACompatLibsFromContainer = tt.allow
		req, err := request.New(request.Input{Env: []string{"NVIDIA_VISIBLE_DEVICES=0"}}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if req.CUDACompatMode != tt.want {
			t.Errorf("cuda-compat-mode %q (allow %v) = %q, want %q", tt.mode, tt.allow, req.CUDACompatMode, tt.want)
		}
	}
}

func TestRequestFromEnvDefaults(t *testing.T) {
	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=GPU-1", "NVIDIA_MIG_MONITOR_DEVICES=all"})
	if !errors.Is(err, request.ErrUnprivileged) || req != nil {
		t.Errorf("RequestFromEnv treats the container as unprivileged: %v, %v", req, err)
	}
	req, err = request.FromEnv(nil)
	if err != nil || req.IsGPU() || req.Devices.Mode != request.DevicesVoid {
		t.Errorf("empty environment: %+v, %v", req, err)
	}
	var nilReq *request.Request
	if nilReq.IsGPU() {
		t.Error("nil request is a GPU container")
	}
}

func TestParseDevices(t *testing.T) {
	tests := []struct {
		in   string
		mode request.DeviceMode
		ids  []string
	}{
		{"", request.DevicesVoid, nil},
		{"void", request.DevicesVoid, nil},
		{"none", request.DevicesNone, nil},
		{"all", request.DevicesAll, nil},
		{" 1 ,0,1,,2", request.DevicesList, []string{"1", "0", "2"}},
		// Special words are matched exactly, as the toolkit does.
		{"ALL", request.DevicesList, []string{"ALL"}},
	}
	for _, tt := range tests {
		d, err := request.ParseDevices(tt.in)
		if err != nil || d.Mode != tt.mode || !slices.Equal(d.IDs, tt.ids) {
			t.Errorf("ParseDevices(%q) = %+v, %v; want %v %q", tt.in, d, err, tt.mode, tt.ids)
		}
	}
	for _, bad := range []string{"0,a b", "0,\x00", "é"} {
		if _, err := request.ParseDevices(bad); !errors.Is(err, request.ErrInvalidDevice) {
			t.Errorf("ParseDevices(%q) error = %v", bad, err)
		}
	}
}

// A request.Request prints as JSON (for a dry run or a plan) and reads back.
func TestRequestJSON(t *testing.T) {
	req, err := request.New(request.Input{Privileged: true, Env: []string{
		"NVIDIA_VISIBLE_DEVICES=GPU-1,0:1", "NVIDIA_DRIVER_CAPABILITIES=graphics,display",
		"NVIDIA_MIG_MONITOR_DEVICES=all", "NVIDIA_IMEX_CHANNELS=5", "NVIDIA_REQUIRE_CUDA=cuda>=12"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"devices":{"mode":"list","ids":["GPU-1","0:1"]},"capabilities":"display,graphics","requirements":["cuda\u003e=12"],` +
		`"migMonitor":"all","imexChannels":[5],"cudaCompatMode":"ldconfig"}`
	if string(b) != want {
		t.Errorf("JSON:\n got %s\nwant %s", b, want)
	}
	var back request.Request
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, req) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"devices":{"mode":"some"}}`), &back); err == nil {
		t.Error("unknown device mode accepted")
	}
}
