package nvcontainer_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
)

// The state and spec parsers are internal/oci's (tested there); these
// tests check what nvcontainer adds: its names for them, the container a
// hook's state and spec give, and the request.

func TestReadStateTooLarge(t *testing.T) {
	big := `{"bundle":"/b","id":"` + strings.Repeat("x", nvcontainer.MaxStateSize) + `"}`
	_, err := nvcontainer.ReadState(context.Background(), strings.NewReader(big))
	if !errors.Is(err, nvcontainer.ErrTooLarge) {
		t.Fatalf("oversized state: %v", err)
	}
}

const minimalSpec = `{"ociVersion":"1.0.2","process":{"env":["PATH=/bin"]},"root":{"path":"rootfs"}}`

// Privileged = CAP_SYS_ADMIN in the bounding set; OCI 1.0.0-rc1…rc4 used a
// flat list (as NVIDIA's runtime hook reads it).
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

// crun's state root comes first, as in the toolkit's hooks; root.path is
// used when the state has none (runc).
func TestContainerFor(t *testing.T) {
	tests := []struct {
		crunRoot string
		root     *specs.Root
		want     string
	}{
		{"/crun/rootfs", &specs.Root{Path: "rootfs"}, "/crun/rootfs"}, // crun's root wins
		{"/crun/rootfs/", &specs.Root{}, "/crun/rootfs"},              // and is cleaned
		{"", &specs.Root{Path: "rootfs"}, "/run/b/rootfs"},            // relative root.path joins the bundle
		{"", &specs.Root{Path: "/abs/rootfs/"}, "/abs/rootfs"},        // absolute stays
		{"", &specs.Root{Path: "../other"}, "/run/other"},             // cleaned
		{"", &specs.Root{Path: "./rootfs//x/.."}, "/run/b/rootfs"},    // cleaned
	}
	for _, tt := range tests {
		st := &nvcontainer.State{Bundle: "/run/b", PID: 9, Root: tt.crunRoot}
		ctr, err := nvcontainer.ContainerFor(st, &specs.Spec{Root: tt.root})
		if err != nil || ctr.Rootfs != tt.want || ctr.PID != 9 {
			t.Errorf("state root %q, root.path %q: %+v, %v; want %q", tt.crunRoot, tt.root.Path, ctr, err, tt.want)
		}
	}
	for _, st := range []*nvcontainer.State{{Bundle: "/b"}, {Bundle: "/b", Root: "/"}} {
		if _, err := nvcontainer.ContainerFor(st, &specs.Spec{Root: &specs.Root{}}); !errors.Is(err, nvcontainer.ErrInvalidRootfs) {
			t.Errorf("state %+v: %v, want ErrInvalidRootfs", st, err)
		}
	}
}

func TestRequestFromHook(t *testing.T) {
	bundle := testutil.Bundle(t, `{"ociVersion":"1.0.2","root":{"path":"rootfs"},
		"process":{"env":["NVIDIA_VISIBLE_DEVICES=0,1","NVIDIA_MIG_CONFIG_DEVICES=all","NVIDIA_DRIVER_CAPABILITIES=utility"],
		"capabilities":{"bounding":["CAP_SYS_ADMIN"]}}}`)
	state := `{"ociVersion":"1.0.2","id":"x","pid":1234,"bundle":"` + bundle + `"}`
	req, ctr, err := nvcontainer.RequestFromHook(context.Background(), strings.NewReader(state), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ctr.PID != 1234 || ctr.Rootfs != filepath.Join(bundle, "rootfs") {
		t.Errorf("container = %+v", ctr)
	}
	if req.Devices.String() != "0,1" || req.MIGConfig != "all" || req.Capabilities.String() != "utility" {
		t.Errorf("request = %+v", req)
	}

	// Under crun the state's root is the container's.
	crun := `{"ociVersion":"1.0.2","pid":0,"bundle":"` + bundle + `","root":"/var/lib/crun/merged"}`
	if _, ctr, err = nvcontainer.RequestFromHook(context.Background(), strings.NewReader(crun), nil); err != nil || ctr.Rootfs != "/var/lib/crun/merged" {
		t.Errorf("crun state: container %+v, %v", ctr, err)
	}

	// Unprivileged: the MIG request is refused, naming the bundle.
	bundle = testutil.Bundle(t, `{"ociVersion":"1.0.2","root":{"path":"/r"},"process":{"env":["NVIDIA_VISIBLE_DEVICES=0","NVIDIA_MIG_CONFIG_DEVICES=all"]}}`)
	_, _, err = nvcontainer.RequestFromHook(context.Background(), strings.NewReader(`{"bundle":"`+bundle+`"}`), nil)
	if !errors.Is(err, nvcontainer.ErrUnprivileged) || !strings.Contains(err.Error(), bundle) {
		t.Errorf("unprivileged MIG request: %v", err)
	}

	// A missing config.json names the path.
	_, _, err = nvcontainer.RequestFromHook(context.Background(), strings.NewReader(`{"bundle":"/nonexistent/b"}`), nil)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/b/config.json") {
		t.Errorf("missing spec: %v", err)
	}
}
