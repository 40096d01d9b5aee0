package nvcontainer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/nvcontainer"
)

func TestParseState(t *testing.T) {
	tests := []struct {
		name, in          string
		bundle, root      string
		pid               int
		wantErr           string
		wantErrIsTooLarge bool
	}{
		{name: "runc state", in: `{"ociVersion":"1.0.2","id":"c1","status":"creating","pid":4242,"bundle":"/run/b"}`, bundle: "/run/b", pid: 4242},
		{name: "pre-17.06 bundlePath", in: `{"pid":7,"bundlePath":"/old/b"}`, bundle: "/old/b", pid: 7},
		{name: "bundle wins over bundlePath", in: `{"bundle":"/new","bundlePath":"/old"}`, bundle: "/new"},
		{name: "crun adds root", in: `{"ociVersion":"1.0","id":"c","pid":0,"root":"/run/b/rootfs","bundle":"/run/b","status":"created"}`, bundle: "/run/b", root: "/run/b/rootfs"},
		{name: "whitespace around", in: "\n {\"bundle\":\"/b\"} \n", bundle: "/b"},
		{name: "no bundle", in: `{"pid":1}`, wantErr: `parsing OCI state "{\"pid\":1}": no "bundle" or "bundlePath"`},
		{name: "negative pid", in: `{"pid":-1,"bundle":"/b"}`, wantErr: "negative pid -1"},
		{name: "fractional pid", in: `{"pid":1.5,"bundle":"/b"}`, wantErr: "pid"},
		{name: "wrong type", in: `{"bundle":3}`, wantErr: "bundle"},
		{name: "syntax error gives the offset", in: `{"bundle":"/b",}`, wantErr: "at offset 16"},
		{name: "not an object", in: `["/b"]`, wantErr: "not a JSON object"},
		{name: "empty", in: ``, wantErr: `parsing OCI state "": not a JSON object`},
		{name: "trailing data", in: `{"bundle":"/b"} {}`, wantErr: "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := nvcontainer.ReadState(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || st != nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReadState(%q) = %+v, %v; want error containing %q", tt.in, st, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.BundleDir() != tt.bundle || st.Root != tt.root || st.PID != tt.pid {
				t.Errorf("ReadState(%q) = %+v", tt.in, st)
			}
		})
	}
}

func TestReadStateTooLarge(t *testing.T) {
	big := `{"bundle":"/b","id":"` + strings.Repeat("x", nvcontainer.MaxStateSize) + `"}`
	_, err := nvcontainer.ReadState(strings.NewReader(big))
	if !errors.Is(err, nvcontainer.ErrTooLarge) {
		t.Fatalf("oversized state: %v", err)
	}
	long := `{"bundle":"/b","id":"` + strings.Repeat("x", 100)
	_, err = nvcontainer.ParseState([]byte(long))
	if err == nil || !strings.Contains(err.Error(), "... (121 bytes)") {
		t.Errorf("error should quote a bounded excerpt: %v", err)
	}
}

const minimalSpec = `{"ociVersion":"1.0.2","process":{"env":["PATH=/bin"]},"root":{"path":"rootfs"}}`

func TestParseSpec(t *testing.T) {
	spec, err := nvcontainer.ParseSpec([]byte(minimalSpec))
	if err != nil || spec.Root.Path != "rootfs" || spec.Process.Env[0] != "PATH=/bin" {
		t.Fatalf("ParseSpec: %+v, %v", spec, err)
	}
	for _, tt := range []struct{ in, want string }{
		{`{"process":{},"root":{}}`, `no "ociVersion"`},
		{`{"ociVersion":"1.0.0","root":{}}`, `no "process"`},
		{`{"ociVersion":"1.0.0","process":{}}`, `no "root"`},
		{`{"ociVersion":"1.0.0","process":{"capabilities":{"bounding":"x"}},"root":{}}`, "bounding"},
		{`nope`, "not a JSON object"},
	} {
		if _, err := nvcontainer.ParseSpec([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSpec(%s) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// Privileged = CAP_SYS_ADMIN in the bounding set; OCI 1.0.0-rc1…rc4 used a
// flat list (container-toolkit.md §4.1).
func TestPrivileged(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want bool
	}{
		{"no capabilities", minimalSpec, false},
		{"bounding has CAP_SYS_ADMIN", `{"ociVersion":"1.2.0","process":{"capabilities":{"bounding":["CAP_CHOWN","CAP_SYS_ADMIN"]}},"root":{"path":"r"}}`, true},
		{"only effective has it", `{"ociVersion":"1.2.0","process":{"capabilities":{"effective":["CAP_SYS_ADMIN"],"bounding":["CAP_CHOWN"]}},"root":{"path":"r"}}`, false},
		{"flat rc list with it", `{"ociVersion":"1.0.0-rc2","process":{"env":["A=1"],"capabilities":["CAP_SYS_ADMIN"]},"root":{"path":"r"}}`, true},
		{"flat rc list without it", `{"ociVersion":"1.0.0-rc2","process":{"capabilities":["CAP_KILL"]},"root":{"path":"r"}}`, false},
	}
	for _, tt := range tests {
		spec, err := nvcontainer.ParseSpec([]byte(tt.spec))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := nvcontainer.Privileged(spec); got != tt.want {
			t.Errorf("%s: Privileged = %v, want %v", tt.name, got, tt.want)
		}
	}
	if nvcontainer.Privileged(nil) {
		t.Error("nil spec is privileged")
	}
}

func TestContainerFor(t *testing.T) {
	st := &nvcontainer.State{Bundle: "/run/b", PID: 9, Root: "/crun/rootfs"}
	tests := []struct {
		root *specs.Root
		want string
	}{
		{&specs.Root{Path: "rootfs"}, "/run/b/rootfs"},         // relative root.path joins the bundle
		{&specs.Root{Path: "/abs/rootfs/"}, "/abs/rootfs"},     // absolute stays
		{&specs.Root{}, "/crun/rootfs"},                        // crun's state root as a fallback
		{&specs.Root{Path: "../other"}, "/run/other"},          // cleaned
		{&specs.Root{Path: "./rootfs//x/.."}, "/run/b/rootfs"}, // cleaned
	}
	for _, tt := range tests {
		ctr, err := nvcontainer.ContainerFor(st, &specs.Spec{Root: tt.root})
		if err != nil || ctr.Rootfs != tt.want || ctr.PID != 9 {
			t.Errorf("root %q: %+v, %v; want %q", tt.root.Path, ctr, err, tt.want)
		}
	}
	if _, err := nvcontainer.ContainerFor(&nvcontainer.State{Bundle: "/b"}, &specs.Spec{Root: &specs.Root{}}); err == nil {
		t.Error("no rootfs anywhere should be an error")
	}
}

func writeBundle(t *testing.T, spec string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRequestFromHook(t *testing.T) {
	bundle := writeBundle(t, `{"ociVersion":"1.0.2","root":{"path":"rootfs"},
		"process":{"env":["NVIDIA_VISIBLE_DEVICES=0,1","NVIDIA_MIG_CONFIG_DEVICES=all","NVIDIA_DRIVER_CAPABILITIES=utility"],
		"capabilities":{"bounding":["CAP_SYS_ADMIN"]}}}`)
	state := `{"ociVersion":"1.0.2","id":"x","pid":1234,"bundle":"` + bundle + `"}`
	req, ctr, err := nvcontainer.RequestFromHook(strings.NewReader(state), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ctr.PID != 1234 || ctr.Rootfs != filepath.Join(bundle, "rootfs") {
		t.Errorf("container = %+v", ctr)
	}
	if req.Devices.String() != "0,1" || req.MIGConfig != "all" || req.Capabilities.String() != "utility" {
		t.Errorf("request = %+v", req)
	}

	// Unprivileged: the MIG request is refused, naming the bundle.
	bundle = writeBundle(t, `{"ociVersion":"1.0.2","root":{"path":"/r"},"process":{"env":["NVIDIA_VISIBLE_DEVICES=0","NVIDIA_MIG_CONFIG_DEVICES=all"]}}`)
	_, _, err = nvcontainer.RequestFromHook(strings.NewReader(`{"bundle":"`+bundle+`"}`), nil)
	if !errors.Is(err, nvcontainer.ErrUnprivileged) || !strings.Contains(err.Error(), bundle) {
		t.Errorf("unprivileged MIG request: %v", err)
	}

	// A missing config.json names the path.
	_, _, err = nvcontainer.RequestFromHook(strings.NewReader(`{"bundle":"/nonexistent/b"}`), nil)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/b/config.json") {
		t.Errorf("missing spec: %v", err)
	}
}
