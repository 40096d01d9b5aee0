package request_test

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/nvcontainer/request"
)

// numbers is "from,from+1,...,to-1".
func numbers(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		if i > from {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// An image sets NVIDIA_IMEX_CHANNELS to every channel number (2^20 of
// them, 7 MiB): the request is refused at once with an error that names
// the variable and the bound, is short, and costs next to no memory (the
// request used to hold all of them, and the hook logged one line each).
func TestRequestAllIMEXChannels(t *testing.T) {
	env := []string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_IMEX_CHANNELS=" + numbers(0, 1<<20)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req, err := request.New(request.Input{Env: env, Privileged: true}, nil)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatalf("accepted %d IMEX channels", len(req.IMEXChannels))
	}
	if !errors.Is(err, request.ErrTooLarge) || !strings.Contains(err.Error(), "NVIDIA_IMEX_CHANNELS") ||
		!strings.Contains(err.Error(), "MaxEnvValue") || len(err.Error()) > 256 {
		t.Errorf("error %q (%d bytes): want request.ErrTooLarge naming NVIDIA_IMEX_CHANNELS and request.MaxEnvValue, short", err, len(err.Error()))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing the request allocated %d bytes, want at most 1 MiB", alloc)
	}
}

// Each bound refuses one past it and accepts it, with an error naming
// the variable and the bound.
func TestRequestBounds(t *testing.T) {
	manyRequires := func(n int) []string {
		var env []string
		for i := range n {
			env = append(env, fmt.Sprintf("NVIDIA_REQUIRE_%d=driver>=1", i))
		}
		return env
	}
	fill := strings.Repeat("x", request.MaxEnvValue-len("NVIDIA_X00="))
	manyBig := func(n int) []string {
		var env []string
		for i := range n {
			env = append(env, fmt.Sprintf("NVIDIA_X%02d=%s", i, fill))
		}
		return env
	}
	for _, tc := range []struct {
		name    string
		env     []string
		ok      bool
		mention []string
	}{
		{"MaxIMEXChannels", []string{"NVIDIA_IMEX_CHANNELS=" + numbers(0, request.MaxIMEXChannels)}, true, nil},
		{"MaxIMEXChannels+1", []string{"NVIDIA_IMEX_CHANNELS=" + numbers(0, request.MaxIMEXChannels+1)}, false,
			[]string{"NVIDIA_IMEX_CHANNELS", "MaxIMEXChannels (2048)"}},
		{"MaxDevices", []string{"NVIDIA_VISIBLE_DEVICES=" + numbers(0, request.MaxDevices)}, true, nil},
		{"MaxDevices+1", []string{"NVIDIA_VISIBLE_DEVICES=" + numbers(0, request.MaxDevices+1)}, false,
			[]string{"NVIDIA_VISIBLE_DEVICES", "MaxDevices (1024)"}},
		{"NV_GPU request.MaxDevices+1", []string{"NV_GPU=" + strings.ReplaceAll(numbers(0, request.MaxDevices+1), ",", " ")}, false,
			[]string{"NV_GPU", "MaxDevices"}},
		{"MaxRequirements", manyRequires(request.MaxRequirements), true, nil},
		{"MaxRequirements+1", manyRequires(request.MaxRequirements + 1), false, []string{"NVIDIA_REQUIRE_", "MaxRequirements (32)"}},
		{"MaxEnvValue+1", []string{"NVIDIA_MIG_CONFIG_DEVICES=" + strings.Repeat("a", request.MaxEnvValue+1)}, false,
			[]string{"NVIDIA_MIG_CONFIG_DEVICES", "MaxEnvValue (65536)"}},
		{"MaxEnvSize", manyBig(request.MaxEnvSize/request.MaxEnvValue - 1), true, nil},
		{"MaxEnvSize+", manyBig(request.MaxEnvSize/request.MaxEnvValue + 1), false, []string{"MaxEnvSize (1048576"}},
		{"other variables are not read", []string{"HUGE=" + strings.Repeat("x", 8<<20)}, true, nil},
	} {
		env := tc.env
		if !strings.HasPrefix(env[0], "NVIDIA_VISIBLE_DEVICES=") && !strings.HasPrefix(env[0], "NV_GPU=") {
			env = append([]string{"NVIDIA_VISIBLE_DEVICES=all"}, env...)
		}
		_, err := request.New(request.Input{Env: env, Privileged: true}, nil)
		if tc.ok {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, request.ErrTooLarge) || len(err.Error()) > 512 {
			t.Errorf("%s: error %q, want a short request.ErrTooLarge", tc.name, err)
			continue
		}
		for _, m := range tc.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, m)
			}
		}
	}
}
