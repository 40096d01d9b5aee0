package devices_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakenvmllib"
	"github.com/go-nvc/nvc/internal/testutil"
)

// helperHost builds the helper and a driver root (a 0700 temp dir, as
// root's) whose libnvidia-ml.so.1 is fakenvmllib's, and returns both.
func helperHost(t *testing.T) (helper, root string) {
	t.Helper()
	bin := t.TempDir()
	helper = filepath.Join(bin, "nvc-nvml")
	testutil.GoBuild(t, "..", "./examples/nvc-nvml", helper)
	root = t.TempDir()
	fakenvmllib.Build(t, filepath.Join(root, "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"), fakenvmllib.Options{Version: "550.54.15"})
	return helper, root
}

// statusOf is what the fake nvmlInit_v2 saw in /proc/thread-self/status:
// the fields name → value, whitespace collapsed.
func statusOf(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err, "nvmlInit_v2 wrote no status")
	m := map[string]string{}
	space := regexp.MustCompile(`\s+`)
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = space.ReplaceAllString(strings.TrimSpace(v), " ")
		}
	}
	return m
}

// TestHelperDropsPrivileges: run by root through devices.NewNVMLHelper,
// the helper answers from a library in a driver root only root can
// search, and NVML's code (the fake nvmlInit_v2, which records its
// thread's status) runs as the identity asked (default: the overflow ids,
// 65534) without supplementary groups, with no capability and with
// NoNewPrivs set; asked to stay root (--user=0:0), it still runs without
// capabilities.
func TestHelperDropsPrivileges(t *testing.T) {
	testutil.RequireRoot(t)
	helper, root := helperHost(t)
	out, err := os.MkdirTemp("", "nvc-nvml-status-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(out) })
	require.NoError(t, os.Chmod(out, 0o1777))
	for _, tc := range []struct {
		name, user, ids string
	}{
		{"default: overflow ids", "", "65534 65534 65534 65534"},
		{"numeric", "1234:4321", ""},
		{"root", "0:0", "0 0 0 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := filepath.Join(out, strings.ReplaceAll(tc.name, " ", "_"))
			t.Setenv(fakenvmllib.EnvInitStatus, status)
			lib := devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: helper, Roots: driver.Roots{Driver: root}, User: tc.user})
			require.NoError(t, lib.Init())
			v, err := lib.SystemDriverVersion()
			require.NoError(t, err)
			assert.Equal(t, "550.54.15", v)
			s := statusOf(t, status)
			uid, gid := tc.ids, tc.ids
			if tc.user == "1234:4321" {
				uid, gid = "1234 1234 1234 1234", "4321 4321 4321 4321"
			}
			assert.Equal(t, uid, s["Uid"], "uid")
			assert.Equal(t, gid, s["Gid"], "gid")
			assert.Empty(t, s["Groups"], "supplementary groups")
			for _, c := range []string{"CapPrm", "CapEff", "CapInh", "CapAmb"} {
				assert.Equal(t, "0000000000000000", s[c], c)
			}
			assert.Equal(t, "1", s["NoNewPrivs"], "NoNewPrivs")
		})
	}
}
