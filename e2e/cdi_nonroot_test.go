//go:build e2e

package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"tags.cncf.io/container-device-interface/pkg/cdi"

	"github.com/go-nvc/nvc/internal/fakehost"
)

// videoGID stands for the host's video group, the group of a host whose
// driver params say DeviceFileMode=0660 DeviceFileGID=44.
const videoGID = 44

// nonRootUser is the container user of these tests.
const nonRootUser = "1000:1000"

// restrictedCDIHost is cdiHost with every device node made 0660
// root:video.
func restrictedCDIHost(t *testing.T) *fakehost.Host {
	t.Helper()
	h := cdiHost(t)
	require.NoError(t, filepath.WalkDir(h.DevRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeCharDevice == 0 {
			return err
		}
		if err := os.Chown(p, 0, videoGID); err != nil {
			return err
		}
		return os.Chmod(p, 0o660)
	}))
	return h
}

// userScript prints the user's ids, /dev/nvidia0's mode and owner, and
// what opening it gives: ENXIO ("No such device or address") when the
// permissions and the device cgroup let the user through (there is no
// driver behind the node), EACCES when the mode and groups do not.
const userScript = "cd /\n" + probeFunc + `
p uid 'busybox id -u'
p groups 'busybox id -G'
p node 'busybox stat -c "%a %u %g" /dev/nvidia0'
p open0 'busybox head -c1 /dev/nvidia0'`

// TestCDINonRootUser runs a container as user 1000:1000 with the spec
// `nvidia-ctk cdi generate` writes for a host whose nodes are 0660
// root:video, and the user opens /dev/nvidia0 inside:
//
//   - podman 4.3, which loads cdiVersion 0.5.0 at most, with the spec of
//     --feature-flag no-additional-gids-for-device-nodes: the node keeps
//     the host's mode and group, and podman gives it the container user
//     as owner (the spec names no uid);
//   - the spec as generated (cdiVersion 0.7.0, additionalGids [44])
//     applied by the CDI module v1.1.2 (as containerd and CRI-O apply it)
//     to a runc bundle: the process also gets the video group.
func TestCDINonRootUser(t *testing.T) {
	h := restrictedCDIHost(t)
	t.Run("podman", func(t *testing.T) {
		requirePodman(t, "runc")
		c := newCDICaseOn(t, h, uniqueClass(), "--feature-flag", "no-additional-gids-for-device-nodes")
		assert.Equal(t, "0.5.0", c.spec.Version, "spec version with no-additional-gids-for-device-nodes")
		stdout, stderr, err := podman(t, "runc", []string{"--user", nonRootUser, "--device", c.qualified("0")},
			busyboxRootfs(t), "/bin/busybox", "sh", "-c", userScript)
		require.NoError(t, err, "podman run --user %s: %s", nonRootUser, stderr)
		got := parseProbe(stdout)
		assert.Equal(t, "1000", got["uid"], "uid")
		assert.Equal(t, "660 1000 44", got["node"], "/dev/nvidia0 mode, owner and group")
		assert.Contains(t, got["open0"], "No such device or address", "opening /dev/nvidia0 as %s: want ENXIO (allowed)", nonRootUser)
	})
	t.Run("runc", func(t *testing.T) {
		rt := requireRuntime(t, "runc")
		c := newCDICaseOn(t, h, uniqueClass())
		assert.Equal(t, "0.7.0", c.spec.Version, "spec version with additionalGids")
		assert.Equal(t, []uint32{videoGID}, c.spec.ContainerEdits.AdditionalGIDs, "spec-wide additionalGids")
		cache, err := cdi.NewCache(cdi.WithSpecDirs(filepath.Dir(c.file)), cdi.WithAutoRefresh(false))
		require.NoError(t, err)
		bundle := newBundle(t, busyboxRootfs(t), userScript, nil, nil)
		editBundle(t, bundle, func(s *specs.Spec) {
			s.Process.User = specs.User{UID: 1000, GID: 1000}
			unresolved, err := cache.InjectDevices(s, c.qualified("0"))
			require.NoError(t, err, "injecting %s (unresolved %v)", c.qualified("0"), unresolved)
		})
		stdout, stderr, code := rt.run(t, bundle, "nvc-nonroot-"+randomHex(), "", "")
		require.Equal(t, 0, code, "runc run: %s", stderr)
		got := parseProbe(stdout)
		assert.True(t, slices.Contains(strings.Fields(got["groups"]), "44"), "groups %q: want the video group 44", got["groups"])
		assert.Equal(t, "660 1000 44", got["node"], "/dev/nvidia0 mode, owner and group")
		assert.Contains(t, got["open0"], "No such device or address", "opening /dev/nvidia0 as %s: want ENXIO (allowed)", nonRootUser)
	})
}
