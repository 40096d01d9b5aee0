package oci_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/internal/testutil"
)

const minimalSpec = `{"ociVersion":"1.0.2","process":{"env":["PATH=/bin"]},"root":{"path":"rootfs"}}`

func TestParseSpec(t *testing.T) {
	spec, err := oci.ParseSpec([]byte(minimalSpec))
	if err != nil || spec.Root.Path != "rootfs" || spec.Process.Env[0] != "PATH=/bin" {
		t.Fatalf("ParseSpec: %+v, %v", spec, err)
	}
	for _, tt := range []struct{ in, want string }{
		{`{"process":{},"root":{}}`, `no "ociVersion"`},
		{`{"ociVersion":"1.0.0","root":{}}`, `no "process"`},
		{`{"ociVersion":"1.0.0","process":{}}`, `no "root"`},
		{`{"ociVersion":"1.0.0","process":{"capabilities":{"bounding":"x"}},"root":{}}`, "bounding"},
		{`{"ociVersion":"1.0.0","process":{"capabilities":[1]},"root":{}}`, "process.capabilities"},
		{`nope`, "not a JSON object"},
	} {
		if _, err := oci.ParseSpec([]byte(tt.in)); err == nil || !strings.HasPrefix(err.Error(), "parsing OCI spec ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSpec(%s) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// OCI 1.0.0-rc1…rc4 gave process.capabilities as one flat list: it is read
// as the bounding, effective and permitted sets, and the rest of process
// is kept.
func TestParseSpecFlatCapabilities(t *testing.T) {
	spec, err := oci.ParseSpec([]byte(`{"ociVersion":"1.0.0-rc2","process":{"env":["A=1"],"capabilities":["CAP_SYS_ADMIN","CAP_KILL"]},"root":{"path":"r"}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := spec.Process.Capabilities
	want := "CAP_SYS_ADMIN,CAP_KILL"
	for name, set := range map[string][]string{"bounding": c.Bounding, "effective": c.Effective, "permitted": c.Permitted} {
		if strings.Join(set, ",") != want {
			t.Errorf("%s = %v, want %s", name, set, want)
		}
	}
	if len(c.Inheritable) != 0 || len(spec.Process.Env) != 1 || spec.Process.Env[0] != "A=1" {
		t.Errorf("process = %+v", spec.Process)
	}
}

func TestLoadSpec(t *testing.T) {
	bundle := testutil.Bundle(t, minimalSpec)
	spec, err := oci.LoadSpec(bundle)
	if err != nil || spec.Root.Path != "rootfs" {
		t.Fatalf("LoadSpec: %+v, %v", spec, err)
	}
	_, err = oci.LoadSpec(t.TempDir())
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("missing config.json: %v", err)
	}
	bad := testutil.Bundle(t, `{"ociVersion":"1.0.2"}`)
	_, err = oci.LoadSpec(bad)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "config.json")) || !strings.Contains(err.Error(), `no "process"`) {
		t.Errorf("invalid config.json: %v", err)
	}
	big := testutil.Bundle(t, `{"ociVersion":"1.0.2","x":"`+strings.Repeat("x", oci.MaxSpecSize)+`"}`)
	if _, err = oci.LoadSpec(big); !errors.Is(err, oci.ErrTooLarge) {
		t.Errorf("oversized config.json: %v", err)
	}
}
