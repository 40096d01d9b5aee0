package toolkit_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

func TestHostRoots(t *testing.T) {
	const file = `
disable-require = false
[nvidia-container-cli]
root = "/host"
[nvc]
proc-root = "/host/proc"
dev-root = "/host/dev"
backend = "procfs"
`
	r, err := toolkit.ParseHostRoots([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if *r != (toolkit.HostRoots{ProcRoot: "/host/proc", DevRoot: "/host/dev", Backend: devices.Procfs}) {
		t.Errorf("ParseHostRoots = %+v", *r)
	}
	// The toolkit's parser keeps reading the file and names our keys.
	cfg, err := toolkit.ParseConfig([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CLI.Root != "/host" || !containsAll(cfg.Unknown, "nvc.backend", "nvc.dev-root", "nvc.proc-root") {
		t.Errorf("ParseConfig: root %q, unknown %q", cfg.CLI.Root, cfg.Unknown)
	}

	for _, bad := range []string{"[nvc]\nbackend = \"cuda\"", "[nvc]\nproc-root = 1", "[nvc"} {
		if _, err := toolkit.ParseHostRoots([]byte(bad)); err == nil {
			t.Errorf("ParseHostRoots(%q) succeeded", bad)
		}
	}
	if _, err := toolkit.ParseHostRoots([]byte("[nvc]\nbackend = \"cuda\"")); !errors.Is(err, toolkit.ErrInvalidConfig) {
		t.Errorf("unknown backend: %v, want ErrInvalidConfig", err)
	}
}

func TestLoadHostRoots(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"", filepath.Join(dir, "missing.toml")} {
		if r, err := toolkit.LoadHostRoots(p); err != nil || *r != (toolkit.HostRoots{}) {
			t.Errorf("LoadHostRoots(%q) = %+v, %v; want the zero value", p, r, err)
		}
	}
	file := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(file, []byte("[nvc]\ndev-root = \"/d\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := toolkit.LoadHostRoots(file); err != nil || r.DevRoot != "/d" {
		t.Errorf("LoadHostRoots = %+v, %v", r, err)
	}
	if err := os.WriteFile(file, []byte("[nvc]\nbackend = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := toolkit.LoadHostRoots(file); err == nil {
		t.Error("LoadHostRoots of a bad file succeeded")
	}
}

// Both config loaders read at most 1 MiB and name the file.
func TestLoadConfigTooLarge(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(file, []byte("#"+strings.Repeat("x", 1<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := toolkit.LoadConfig(file)
	_, err2 := toolkit.LoadHostRoots(file)
	for _, err := range []error{err, err2} {
		if !errors.Is(err, request.ErrTooLarge) || !strings.Contains(err.Error(), file) {
			t.Errorf("oversized config: %v, want ErrTooLarge naming %s", err, file)
		}
	}
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}
