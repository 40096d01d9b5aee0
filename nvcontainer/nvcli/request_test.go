package nvcli_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

func TestConfigureFlagsRequest(t *testing.T) {
	many := make([]string, request.MaxRequirements+1)
	for i := range many {
		many[i] = "cuda>=11.0"
	}
	tooManyChannels := make([]string, request.MaxIMEXChannels+1)
	for i := range tooManyChannels {
		tooManyChannels[i] = strconv.Itoa(i)
	}
	tests := []struct {
		name   string
		flags  nvcli.ConfigureFlags
		want   request.Request
		err    error
		prefix nvcli.Prefix
	}{
		{name: "no device", want: request.Request{Devices: request.Devices{Mode: request.DevicesNone}}},
		{name: "empty device", flags: nvcli.ConfigureFlags{Devices: []string{" , "}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesNone}}},
		{name: "all any case", flags: nvcli.ConfigureFlags{Devices: []string{"ALL"}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesAll}}},
		{name: "repeated and joined", flags: nvcli.ConfigureFlags{Devices: []string{"0,,1", " 2 "}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: []string{"0", "1", "2"}}}},
		{name: "ids before all kept for validation", flags: nvcli.ConfigureFlags{Devices: []string{"9,all"}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesList, IDs: []string{"9", "all"}}}},
		{name: "caps, requirements, mig, imex", flags: nvcli.ConfigureFlags{
			Devices: []string{"all"}, Capabilities: capabilities.Of(capabilities.Compute, capabilities.Utility),
			Requirements: []string{"cuda>=12.0", "brand=tesla"}, MIGConfig: []string{"all"}, MIGMonitor: []string{"all", ""},
			IMEXChannels: []string{"3,5", "3"}},
			want: request.Request{Devices: request.Devices{Mode: request.DevicesAll},
				Capabilities: capabilities.Of(capabilities.Compute, capabilities.Utility),
				Requirements: []string{"cuda>=12.0", "brand=tesla"}, MIGConfig: "all", MIGMonitor: "all,",
				IMEXChannels: []uint32{3, 5}}},
		{name: "too many requirements", flags: nvcli.ConfigureFlags{Requirements: many}, err: request.ErrTooManyRequirements, prefix: nvcli.PrefixInput},
		{name: "too many requirements before a bad channel", flags: nvcli.ConfigureFlags{Requirements: many, IMEXChannels: []string{"x"}},
			err: request.ErrTooManyRequirements, prefix: nvcli.PrefixInput},
		{name: "imex not a number", flags: nvcli.ConfigureFlags{IMEXChannels: []string{"x"}}, err: request.ErrInvalidDevice, prefix: nvcli.PrefixIMEX},
		{name: "imex too large", flags: nvcli.ConfigureFlags{IMEXChannels: []string{"1048576"}}, err: request.ErrInvalidDevice, prefix: nvcli.PrefixIMEX},
		{name: "imex too many", flags: nvcli.ConfigureFlags{IMEXChannels: tooManyChannels}, err: request.ErrTooLarge, prefix: nvcli.PrefixInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.flags.Request()
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				var ce *nvcli.Error
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tc.prefix, ce.Prefix)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, *got)
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
		{modes: []string{"mount", "ldconfig"}, err: `input error: conflicting --cuda-compat-mode values "mount" and "ldconfig"`},
		{modes: []string{"hook"}, err: `input error: invalid --cuda-compat-mode "hook"`},
		{modes: []string{""}, err: `input error: invalid --cuda-compat-mode ""`},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q no-cntlibs=%v", tc.modes, tc.noCntlibs), func(t *testing.T) {
			f := nvcli.ConfigureFlags{CUDACompatModes: tc.modes, NoCntlibs: tc.noCntlibs}
			got, err := f.Request()
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.CUDACompatMode)
		})
	}
}

// TestIMEXChannels: list's --imex-channel values; every error is printed
// as "error parsing IMEX info".
func TestIMEXChannels(t *testing.T) {
	got, err := nvcli.IMEXChannels([]string{"3,5", "3", ""})
	require.NoError(t, err)
	assert.Equal(t, []uint32{3, 5}, got)
	got, err = nvcli.IMEXChannels(nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	for name, values := range map[string][]string{"not a number": {"x"}, "too large": {"1048576"}, "too many": make([]string, request.MaxIMEXChannels+1)} {
		t.Run(name, func(t *testing.T) {
			if name == "too many" {
				for i := range values {
					values[i] = strconv.Itoa(i)
				}
			}
			_, err := nvcli.IMEXChannels(values)
			var ce *nvcli.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, nvcli.PrefixIMEX, ce.Prefix)
			assert.True(t, strings.HasPrefix(err.Error(), "error parsing IMEX info: "), "%v", err)
		})
	}
}

// TestConfigureFlagsRoundTrip reads back the configure flags
// toolkit.CLIArgs writes, as nvidia-container-cli would: the request
// is the same.
func TestConfigureFlagsRoundTrip(t *testing.T) {
	envs := [][]string{
		{"NVIDIA_VISIBLE_DEVICES=all"},
		{"NVIDIA_VISIBLE_DEVICES=none"},
		{"NVIDIA_VISIBLE_DEVICES=1,GPU-abc,0:1", "NVIDIA_DRIVER_CAPABILITIES=all", "NVIDIA_REQUIRE_CUDA=cuda>=12.0 brand=tesla"},
		{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=4,2", "NVIDIA_DRIVER_CAPABILITIES=video,display"},
	}
	for _, env := range envs {
		t.Run(strings.Join(env, " "), func(t *testing.T) {
			want := privReq(t, env...)
			want.CUDACompatMode = request.CompatLdconfig
			args := toolkit.CLIArgs(want, nil, nvcontainer.Container{PID: 7, Rootfs: "/r"})
			got, err := flagsFromArgs(t, args).Request()
			require.NoError(t, err, "%q", args)
			want.Notes = nil
			assert.Equal(t, want, got, "%q read back", args)
		})
	}
}

// flagsFromArgs reads the configure options of a CLIArgs line.
func flagsFromArgs(t *testing.T, args []string) *nvcli.ConfigureFlags {
	t.Helper()
	f := &nvcli.ConfigureFlags{}
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
			require.NoError(t, err, "unexpected argument %q", a)
			f.Capabilities |= capabilities.Of(c)
		}
	}
	return f
}
