package oci_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/internal/testutil"
)

const minimalSpec = `{"ociVersion":"1.0.2","process":{"env":["PATH=/bin"]},"root":{"path":"rootfs"}}`

func TestParseSpec(t *testing.T) {
	spec, err := oci.ParseSpec([]byte(minimalSpec))
	require.NoError(t, err, "ParseSpec")
	require.Equal(t, "rootfs", spec.Root.Path, "ParseSpec: %+v", spec)
	require.Equal(t, []string{"PATH=/bin"}, spec.Process.Env, "ParseSpec: %+v", spec)
	for _, tt := range []struct{ in, want string }{
		{`{"process":{},"root":{}}`, `no "ociVersion"`},
		{`{"ociVersion":"1.0.0","root":{}}`, `no "process"`},
		{`{"ociVersion":"1.0.0","process":{}}`, `no "root"`},
		{`{"ociVersion":"1.0.0","process":{"capabilities":{"bounding":"x"}},"root":{}}`, "bounding"},
		{`{"ociVersion":"1.0.0","process":{"capabilities":[1]},"root":{}}`, "process.capabilities"},
		{`nope`, "not a JSON object"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			_, err := oci.ParseSpec([]byte(tt.in))
			require.Error(t, err, "ParseSpec(%s)", tt.in)
			assert.True(t, strings.HasPrefix(err.Error(), "parsing OCI spec "), "ParseSpec(%s) error = %v", tt.in, err)
			assert.ErrorContains(t, err, tt.want, "ParseSpec(%s)", tt.in)
		})
	}
}

// OCI 1.0.0-rc1…rc4 gave process.capabilities as one flat list: it is read
// as the bounding, effective and permitted sets, and the rest of process
// is kept.
func TestParseSpecFlatCapabilities(t *testing.T) {
	spec, err := oci.ParseSpec([]byte(`{"ociVersion":"1.0.0-rc2","process":{"env":["A=1"],"capabilities":["CAP_SYS_ADMIN","CAP_KILL"]},"root":{"path":"r"}}`))
	require.NoError(t, err)
	c := spec.Process.Capabilities
	want := []string{"CAP_SYS_ADMIN", "CAP_KILL"}
	for name, set := range map[string][]string{"bounding": c.Bounding, "effective": c.Effective, "permitted": c.Permitted} {
		assert.Equal(t, want, set, name)
	}
	assert.Empty(t, c.Inheritable, "process = %+v", spec.Process)
	assert.Equal(t, []string{"A=1"}, spec.Process.Env, "process = %+v", spec.Process)
}

func TestLoadSpec(t *testing.T) {
	bundle := testutil.Bundle(t, minimalSpec)
	spec, err := oci.LoadSpec(bundle)
	require.NoError(t, err, "LoadSpec")
	require.Equal(t, "rootfs", spec.Root.Path, "LoadSpec: %+v", spec)
	_, err = oci.LoadSpec(t.TempDir())
	assert.ErrorIs(t, err, fs.ErrNotExist, "missing config.json")
	assert.ErrorContains(t, err, "config.json", "missing config.json")
	bad := testutil.Bundle(t, `{"ociVersion":"1.0.2"}`)
	_, err = oci.LoadSpec(bad)
	assert.ErrorContains(t, err, filepath.Join(bad, "config.json"), "invalid config.json")
	assert.ErrorContains(t, err, `no "process"`, "invalid config.json")
	big := testutil.Bundle(t, `{"ociVersion":"1.0.2","x":"`+strings.Repeat("x", oci.MaxSpecSize)+`"}`)
	_, err = oci.LoadSpec(big)
	assert.ErrorIs(t, err, oci.ErrTooLarge, "oversized config.json")
}
