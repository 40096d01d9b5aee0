package toolkit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
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
sys-root = "/host/sys"
backend = "procfs"
`
	r, err := toolkit.ParseHostRoots([]byte(file))
	require.NoError(t, err)
	assert.Equal(t, toolkit.HostRoots{Roots: driver.Roots{Proc: "/host/proc", Dev: "/host/dev", Sys: "/host/sys"}, Backend: devices.Procfs}, *r, "ParseHostRoots")
	// The toolkit's parser keeps reading the file and names our keys.
	cfg, err := toolkit.ParseConfig([]byte(file))
	require.NoError(t, err)
	assert.Equal(t, "/host", cfg.CLI.Root, "ParseConfig: root")
	assert.Subset(t, cfg.Unknown, []string{"nvc.backend", "nvc.dev-root", "nvc.proc-root", "nvc.sys-root"}, "ParseConfig: unknown")

	bad := []struct{ name, toml string }{
		{"unknown backend", "[nvc]\nbackend = \"cuda\""},
		{"proc-root not a string", "[nvc]\nproc-root = 1"},
		{"broken table", "[nvc"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toolkit.ParseHostRoots([]byte(tt.toml))
			assert.Error(t, err, "ParseHostRoots(%q) succeeded", tt.toml)
		})
	}
	_, err = toolkit.ParseHostRoots([]byte("[nvc]\nbackend = \"cuda\""))
	assert.ErrorIs(t, err, toolkit.ErrInvalidConfig, "unknown backend")
}

// The [nvc] roots and the toolkit's root make one driver.Roots, whose dev
// root defaults inside the driver root as devices and driver both take it.
func TestHostRootsDefaults(t *testing.T) {
	r, err := toolkit.ParseHostRoots([]byte("[nvc]\nproc-root = \"/host/proc\"\n"))
	require.NoError(t, err)
	roots := r.Roots
	roots.Driver = "/run/nvidia/driver"
	assert.Equal(t, driver.Roots{Driver: "/run/nvidia/driver", Proc: "/host/proc", Dev: "/run/nvidia/driver/dev", LDCache: "/etc/ld.so.cache", Sys: "/sys"},
		roots.WithDefaults())
}

func TestLoadHostRoots(t *testing.T) {
	dir := t.TempDir()
	for name, p := range map[string]string{"no path": "", "missing file": filepath.Join(dir, "missing.toml")} {
		t.Run(name, func(t *testing.T) {
			r, err := toolkit.LoadHostRoots(p)
			require.NoError(t, err)
			assert.Equal(t, toolkit.HostRoots{}, *r, "LoadHostRoots(%q)", p)
		})
	}
	file := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(file, []byte("[nvc]\ndev-root = \"/d\"\n"), 0o644))
	r, err := toolkit.LoadHostRoots(file)
	require.NoError(t, err)
	assert.Equal(t, "/d", r.Roots.Dev)
	require.NoError(t, os.WriteFile(file, []byte("[nvc]\nbackend = 3\n"), 0o644))
	_, err = toolkit.LoadHostRoots(file)
	assert.Error(t, err, "LoadHostRoots of a bad file succeeded")
}

// Both config loaders read at most 1 MiB and name the file.
func TestLoadConfigTooLarge(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(file, []byte("#"+strings.Repeat("x", 1<<20)+"\n"), 0o644))
	_, err := toolkit.LoadConfig(file)
	_, err2 := toolkit.LoadHostRoots(file)
	for name, err := range map[string]error{"LoadConfig": err, "LoadHostRoots": err2} {
		assert.ErrorIs(t, err, request.ErrTooLarge, "%s: oversized config", name)
		assert.ErrorContains(t, err, file, "%s: error names the file", name)
	}
}
