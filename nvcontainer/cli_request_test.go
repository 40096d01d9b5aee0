package nvcontainer_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

func TestConfigureFlagsRequest(t *testing.T) {
	many := make([]string, request.MaxRequirements+1)
	for i := range many {
		many[i] = "cuda>=11.0"
	}
	tests := []struct {
		name  string
		flags nvcontainer.ConfigureFlags
		want  request.Request
		err   error
	}{
		{name: "no device", want: request.Request{Devices: request.Devices{Mode: request.DevicesNone}}},
		{name: "empty device", flags: nvcontainer.ConfigureFlags{Devices: []string{" , "}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesNone}}},
		{name: "all any case", flags: nvcontainer.ConfigureFlags{Devices: []string{"ALL"}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesAll}}},
		{name: "repeated and joined", flags: nvcontainer.ConfigureFlags{Devices: []string{"0,,1", " 2 "}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: []string{"0", "1", "2"}}}},
		{name: "ids before all kept for validation", flags: nvcontainer.ConfigureFlags{Devices: []string{"9,all"}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: []string{"9", "all"}}}},
		{name: "caps, requirements, mig, imex", flags: nvcontainer.ConfigureFlags{
			Devices: []string{"all"}, Capabilities: capabilities.Of(capabilities.Compute, capabilities.Utility),
			Requirements: []string{"cuda>=12.0", "brand=tesla"}, MIGConfig: []string{"all"}, MIGMonitor: []string{"all", ""},
			IMEXChannels: []string{"3,5", "3"}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesAll},
				Capabilities: capabilities.Of(capabilities.Compute, capabilities.Utility),
				Requirements: []string{"cuda>=12.0", "brand=tesla"}, MIGConfig: "all", MIGMonitor: "all,",
				IMEXChannels: []uint32{3, 5}}},
		{name: "too many requirements", flags: nvcontainer.ConfigureFlags{Requirements: many}, err: request.ErrTooManyRequirements},
		{name: "imex not a number", flags: nvcontainer.ConfigureFlags{IMEXChannels: []string{"x"}}, err: request.ErrInvalidDevice},
		{name: "imex too large", flags: nvcontainer.ConfigureFlags{IMEXChannels: []string{"1048576"}}, err: request.ErrInvalidDevice},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.flags.Request()
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Request() error = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("Request() = %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}

func TestConfigureFlagsCompatMode(t *testing.T) {
	tests := []struct {
		modes     []string
		noCntlibs bool
		want      request.CUDACompatMode
		err       string
	}{
		{want: request.CompatDefault},
		{modes: []string{"mount"}, want: request.CompatMount},
		{modes: []string{"ldconfig", "ldconfig"}, want: request.CompatLdconfig},
		{modes: []string{"mount", "disabled"}, want: request.CompatDisabled},
		{modes: []string{"ldconfig"}, noCntlibs: true, want: request.CompatDisabled},
		{noCntlibs: true, want: request.CompatDisabled},
		{modes: []string{"mount", "ldconfig"}, err: `conflicting --cuda-compat-mode values "mount" and "ldconfig"`},
		{modes: []string{"hook"}, err: `invalid --cuda-compat-mode "hook"`},
		{modes: []string{""}, err: `invalid --cuda-compat-mode ""`},
	}
	for _, tc := range tests {
		f := nvcontainer.ConfigureFlags{CUDACompatModes: tc.modes, NoCntlibs: tc.noCntlibs}
		got, err := f.Request()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q no-cntlibs=%v: error %v, want %q", tc.modes, tc.noCntlibs, err, tc.err)
			}
			continue
		}
		if err != nil || got.CUDACompatMode != tc.want {
			t.Errorf("%q no-cntlibs=%v: mode %q, %v; want %q", tc.modes, tc.noCntlibs, got.CUDACompatMode, err, tc.want)
		}
	}
}

// TestConfigureFlagsRoundTrip reads back the configure flags Request.CLIArgs
// writes, as nvidia-container-cli would: the request is the same.
func TestConfigureFlagsRoundTrip(t *testing.T) {
	envs := [][]string{
		{"NVIDIA_VISIBLE_DEVICES=all"},
		{"NVIDIA_VISIBLE_DEVICES=none"},
		{"NVIDIA_VISIBLE_DEVICES=1,GPU-abc,0:1", "NVIDIA_DRIVER_CAPABILITIES=all", "NVIDIA_REQUIRE_CUDA=cuda>=12.0 brand=tesla"},
		{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=4,2", "NVIDIA_DRIVER_CAPABILITIES=video,display"},
	}
	for _, env := range envs {
		want := privReq(t, env...)
		want.CUDACompatMode = request.CompatLdconfig
		args := toolkit.CLIArgs(want, nil, nvcontainer.Container{PID: 7, Rootfs: "/r"})
		got, err := flagsFromArgs(t, args).Request()
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		want.Notes = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q\nread back as %+v\nwant %+v", args, *got, *want)
		}
	}
}

// flagsFromArgs reads the configure options of a CLIArgs line.
func flagsFromArgs(t *testing.T, args []string) *nvcontainer.ConfigureFlags {
	t.Helper()
	f := &nvcontainer.ConfigureFlags{}
	i := 0
	for i < len(args) && args[i] != "configure" {
		i++
	}
	lists := map[string]*[]string{"device": &f.Devices, "require": &f.Requirements, "imex-channel": &f.IMEXChannels,
		"mig-config": &f.MIGConfig, "mig-monitor": &f.MIGMonitor, "cuda-compat-mode": &f.CUDACompatModes}
	for _, a := range args[i+1:] {
		name, val, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if list, ok := lists[name]; ok {
			*list = append(*list, val)
			continue
		}
		switch name {
		case "ldconfig", "pid", "/r", "no-cgroups":
		default:
			c, err := capabilities.ParseCapability(name)
			if err != nil {
				t.Fatalf("unexpected argument %q", a)
			}
			f.Capabilities |= capabilities.Of(c)
		}
	}
	return f
}
