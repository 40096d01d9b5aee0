package toolkit_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

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
		st := &request.State{Bundle: "/run/b", PID: 9, Root: tt.crunRoot}
		ctr, err := toolkit.ContainerFor(st, &specs.Spec{Root: tt.root})
		if err != nil || ctr.Rootfs != tt.want || ctr.PID != 9 {
			t.Errorf("state root %q, root.path %q: %+v, %v; want %q", tt.crunRoot, tt.root.Path, ctr, err, tt.want)
		}
	}
	for _, st := range []*request.State{{Bundle: "/b"}, {Bundle: "/b", Root: "/"}} {
		if _, err := toolkit.ContainerFor(st, &specs.Spec{Root: &specs.Root{}}); !errors.Is(err, nvcontainer.ErrInvalidRootfs) {
			t.Errorf("state %+v: %v, want ErrInvalidRootfs", st, err)
		}
	}
}

func TestRequestFromHook(t *testing.T) {
	bundle := testutil.Bundle(t, `{"ociVersion":"1.0.2","root":{"path":"rootfs"},
		"process":{"env":["NVIDIA_VISIBLE_DEVICES=0,1","NVIDIA_MIG_CONFIG_DEVICES=all","NVIDIA_DRIVER_CAPABILITIES=utility"],
		"capabilities":{"bounding":["CAP_SYS_ADMIN"]}}}`)
	state := `{"ociVersion":"1.0.2","id":"x","pid":1234,"bundle":"` + bundle + `"}`
	req, ctr, err := toolkit.RequestFromHook(context.Background(), strings.NewReader(state), nil)
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
	if _, ctr, err = toolkit.RequestFromHook(context.Background(), strings.NewReader(crun), nil); err != nil || ctr.Rootfs != "/var/lib/crun/merged" {
		t.Errorf("crun state: container %+v, %v", ctr, err)
	}

	// Unprivileged: the MIG request is refused, naming the bundle.
	bundle = testutil.Bundle(t, `{"ociVersion":"1.0.2","root":{"path":"/r"},"process":{"env":["NVIDIA_VISIBLE_DEVICES=0","NVIDIA_MIG_CONFIG_DEVICES=all"]}}`)
	_, _, err = toolkit.RequestFromHook(context.Background(), strings.NewReader(`{"bundle":"`+bundle+`"}`), nil)
	if !errors.Is(err, request.ErrUnprivileged) || !strings.Contains(err.Error(), bundle) {
		t.Errorf("unprivileged MIG request: %v", err)
	}

	// A missing config.json names the path.
	_, _, err = toolkit.RequestFromHook(context.Background(), strings.NewReader(`{"bundle":"/nonexistent/b"}`), nil)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/b/config.json") {
		t.Errorf("missing spec: %v", err)
	}
}
