package oci_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/internal/testutil"
)

func TestRootfs(t *testing.T) {
	spec := func(p string) *specs.Spec { return &specs.Spec{Root: &specs.Root{Path: p}} }
	tests := []struct {
		name  string
		state oci.State
		spec  *specs.Spec
		want  string // "" means an ErrInvalidRootfs error
	}{
		{"crun's root wins over root.path", oci.State{Bundle: "/run/b", Root: "/run/crun/rootfs"}, spec("rootfs"), "/run/crun/rootfs"},
		{"crun's root without a spec", oci.State{Bundle: "/run/b", Root: "/run/crun/rootfs/"}, nil, "/run/crun/rootfs"},
		{"relative root.path joins the bundle", oci.State{Bundle: "/run/b"}, spec("rootfs"), "/run/b/rootfs"},
		{"relative crun root joins the bundle", oci.State{Bundle: "/run/b", Root: "r"}, spec("/abs"), "/run/b/r"},
		{"bundlePath", oci.State{BundlePath: "/old/b"}, spec("rootfs"), "/old/b/rootfs"},
		{"absolute root.path stays", oci.State{Bundle: "/run/b"}, spec("/abs/rootfs/"), "/abs/rootfs"},
		{"cleaned", oci.State{Bundle: "/run/b"}, spec("./rootfs//x/.."), "/run/b/rootfs"},
		{"up and out of the bundle", oci.State{Bundle: "/run/b"}, spec("../other"), "/run/other"},
		{"no root anywhere", oci.State{Bundle: "/run/b"}, spec(""), ""},
		{"no spec root", oci.State{Bundle: "/run/b"}, &specs.Spec{}, ""},
		{"nil spec", oci.State{Bundle: "/run/b"}, nil, ""},
		{"root is /", oci.State{Bundle: "/run/b", Root: "/"}, nil, ""},
		{"root.path climbs to /", oci.State{Bundle: "/run/b"}, spec("../.."), ""},
		{"relative bundle", oci.State{Bundle: "b"}, spec("rootfs"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := oci.Rootfs(&tt.state, tt.spec)
			if tt.want == "" {
				require.ErrorIs(t, err, oci.ErrInvalidRootfs, "Rootfs = %q", got)
				require.Empty(t, got, "Rootfs with an error")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got, "Rootfs")
		})
	}
}

// LoadRootfs reads config.json only when the state does not name the root.
func TestLoadRootfs(t *testing.T) {
	bundle := testutil.Bundle(t, `{"ociVersion":"1.0.2","process":{},"root":{"path":"rootfs"}}`)
	got, err := oci.LoadRootfs(&oci.State{Bundle: bundle})
	if assert.NoError(t, err, "from config.json") {
		assert.Equal(t, filepath.Join(bundle, "rootfs"), got, "from config.json")
	}
	got, err = oci.LoadRootfs(&oci.State{Bundle: "/nonexistent", Root: "/run/crun/r"})
	if assert.NoError(t, err, "from crun's root, no config.json") {
		assert.Equal(t, "/run/crun/r", got, "from crun's root, no config.json")
	}
	_, err = oci.LoadRootfs(&oci.State{Bundle: "/nonexistent"})
	assert.ErrorContains(t, err, "loading OCI spec", "no root and no config.json")
	empty := testutil.Bundle(t, `{"ociVersion":"1.0.2","process":{},"root":{"path":""}}`)
	_, err = oci.LoadRootfs(&oci.State{Bundle: empty})
	assert.ErrorIs(t, err, oci.ErrInvalidRootfs, "empty root.path")
	assert.ErrorContains(t, err, "no root.path", "empty root.path")
}

// The package is imported by a CGO_ENABLED=0 hook: it may depend on
// nothing outside the standard library but runtime-spec's types and
// internal/sentinel (standard library only).
func TestDependencies(t *testing.T) {
	goCmd := testutil.RequireCommand(t, "go")
	out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	require.NoError(t, err, "go list")
	want := "github.com/go-nvc/nvc/internal/sentinel\ngithub.com/opencontainers/runtime-spec/specs-go\ngithub.com/go-nvc/nvc/internal/oci"
	assert.Equal(t, want, strings.TrimSpace(string(out)), "dependencies outside the standard library")
}
