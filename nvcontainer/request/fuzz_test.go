package request_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// quotedPrefix is how an error quotes an input an image chose: whole up to
// 64 bytes, else its first 64 (the rest is counted, not quoted).
func quotedPrefix(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strconv.Quote(s)
}

// FuzzParseDevices: no panic; an error names the list and matches
// request.ErrInvalidDevice; a result is deduplicated, printable, and parses back.
func FuzzParseDevices(f *testing.F) {
	for _, s := range []string{"", "all", "none", "void", " 1 ,0,1,,2", "0,void", "GPU-1,MIG-2,0:1", "a b", "0,\x00", "ALL,none"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		d, err := request.ParseDevices(list)
		if err != nil {
			if d.Mode != request.DevicesVoid || d.IDs != nil || !errors.Is(err, request.ErrInvalidDevice) ||
				!strings.Contains(err.Error(), quotedPrefix(list)) {
				t.Fatalf("ParseDevices(%q) = %+v, %v", list, d, err)
			}
			return
		}
		if (d.Mode == request.DevicesList) != (len(d.IDs) > 0) {
			t.Fatalf("ParseDevices(%q): mode %v with IDs %q", list, d.Mode, d.IDs)
		}
		seen := map[string]bool{}
		for _, id := range d.IDs {
			if id == "" || seen[id] || strings.ContainsAny(id, ", ") {
				t.Fatalf("ParseDevices(%q): bad ID %q in %q", list, id, d.IDs)
			}
			seen[id] = true
		}
		again, err := request.ParseDevices(d.String())
		if err != nil || again.String() != d.String() {
			t.Fatalf("ParseDevices(%q).String() = %q reparses as %+v, %v", list, d.String(), again, err)
		}
		if _, err := request.ParseIMEXChannels(list); err != nil && !strings.Contains(err.Error(), quotedPrefix(list)) {
			t.Fatalf("ParseIMEXChannels(%q) error %v does not name the list", list, err)
		}
	})
}

// FuzzParseState: no panic; nil result iff error; errors say what they parse.
func FuzzParseState(f *testing.F) {
	for _, s := range []string{`{"pid":1,"bundle":"/b"}`, `{"bundlePath":"/b"}`, `{"root":"/r","bundle":"b","pid":0}`, `{"pid":-1}`, `[]`, `{`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := request.ParseState(data)
		if (st == nil) == (err == nil) {
			t.Fatalf("ParseState(%q) = %v, %v", data, st, err)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "parsing OCI state ") {
				t.Fatalf("ParseState(%q) error %q", data, err)
			}
			return
		}
		if st.BundleDir() == "" || st.PID < 0 {
			t.Fatalf("ParseState(%q) accepted %+v", data, st)
		}
	})
}

// FuzzParseSpec: no panic; nil result iff error; a result has what the
// hook requires.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{minimalSpec,
		`{"ociVersion":"1.0.0-rc2","process":{"capabilities":["CAP_SYS_ADMIN"]},"root":{"path":"r"}}`,
		`{"ociVersion":"1","process":{"capabilities":{"bounding":["CAP_SYS_ADMIN"]}},"root":{},"mounts":[{"destination":"/x","source":"/dev/null"}]}`,
		`{"process":{"capabilities":[1]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := request.ParseSpec(data)
		if (spec == nil) == (err == nil) {
			t.Fatalf("ParseSpec(%q) = %v, %v", data, spec, err)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "parsing OCI spec ") {
				t.Fatalf("ParseSpec(%q) error %q", data, err)
			}
			return
		}
		if spec.Version == "" || spec.Process == nil || spec.Root == nil {
			t.Fatalf("ParseSpec(%q) accepted %+v", data, spec)
		}
		// request.Request errors name an environment entry or a variable.
		_, err = request.FromSpec(spec, nil)
		if err != nil && !strings.HasPrefix(err.Error(), "parsing environment entry ") && !strings.HasPrefix(err.Error(), "reading ") {
			t.Fatalf("RequestFromSpec error names no variable: %v", err)
		}
	})
}

// FuzzNewRequest drives the environment rules with arbitrary values: no
// panic; errors name a variable; a GPU request prints as a command line
// that ends with --pid and the rootfs.
func FuzzNewRequest(f *testing.F) {
	f.Add("0,1", "compute", "all", "12.4.1", "all", true)
	f.Add("", "", "", "abc", "", false)
	f.Add("none", "all,foo", "1,2", "", "", false)
	f.Fuzz(func(t *testing.T, nvd, caps, imex, cuda, mig string, privileged bool) {
		env := []string{"NVIDIA_VISIBLE_DEVICES=" + nvd, "NVIDIA_DRIVER_CAPABILITIES=" + caps,
			"NVIDIA_IMEX_CHANNELS=" + imex, "CUDA_VERSION=" + cuda, "NVIDIA_MIG_CONFIG_DEVICES=" + mig}
		req, err := request.New(request.Input{Env: env, Privileged: privileged}, nil)
		if err != nil {
			if req != nil || !strings.HasPrefix(err.Error(), "reading NVIDIA_") && !strings.HasPrefix(err.Error(), "reading CUDA_VERSION") {
				t.Fatalf("NewRequest(%q) = %v, %v", env, req, err)
			}
			return
		}
		args := toolkit.CLIArgs(req, nil, nvcontainer.Container{PID: 1, Rootfs: "/r"})
		if req.IsGPU() != (args != nil) {
			t.Fatalf("NewRequest(%q): IsGPU %v but args %q", env, req.IsGPU(), args)
		}
		if args != nil && (args[len(args)-2] != "--pid=1" || args[len(args)-1] != "/r") {
			t.Fatalf("NewRequest(%q): args %q", env, args)
		}
	})
}
