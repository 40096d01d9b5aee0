//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestRuntimeHostVolume gives a GPU container a host directory as a
// volume over its library directory (`-v /srv/libs:/usr/lib/x86_64-linux-gnu`),
// under runc and crun with our prestart hook. The hook must refuse, naming
// the volume, so that the runtime does not start the container, and leave
// no placeholder or link in the host directory (configure left 19 there
// before). A volume elsewhere (/data) does not stop the container.
func TestRuntimeHostVolume(t *testing.T) {
	for _, name := range []string{"runc", "crun"} {
		t.Run(name, func(t *testing.T) {
			c := &runtimeCase{t: t, rt: requireRuntime(t, name), host: simHost(t, nil),
				hook: buildExample(t, "nvidia-container-runtime-hook", false)}
			t.Run("over-libdir", func(t *testing.T) { c.runWithVolume(t, "/usr/lib/x86_64-linux-gnu", true) })
			t.Run("elsewhere", func(t *testing.T) { c.runWithVolume(t, "/data", false) })
		})
	}
}

func (c *runtimeCase) runWithVolume(t *testing.T, dest string, refused bool) {
	logFile := filepath.Join(t.TempDir(), "hook.log")
	config := hookConfig(t, c.host, []string{"debug = " + quote(logFile)})
	host := testutil.Tree(t, "file libfoo.so.1 \"host library\"\nfile notes \"host file\"\ndir sub")
	before := container.SnapshotTree(t, host)
	_, bundle := c.start(t, gpuEnv, "prestart", ourHook(c.hook, config, "prestart"))
	editBundle(t, bundle, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: dest, Type: "bind", Source: host, Options: []string{"rbind", "rw"}})
	})
	out, stderr, code := c.rt.run(t, bundle, strings.ToLower(testName(t)), "", "")
	log, _ := os.ReadFile(logFile)
	diff := container.DiffSnapshots(before, container.SnapshotTree(t, host))
	assert.Empty(t, diff, "the host directory given as the volume %s changed:\n%s", dest, strings.Join(diff, "\n"))
	if !refused {
		assert.Equal(t, 0, code, "%s run with a volume at %s: exit %d\nstdout:\n%s\nstderr:\n%s", c.rt.name, dest, code, out, stderr)
		return
	}
	msg := `volume mounted at \"` + dest + `\"` // as the log quotes the error
	const why = "%s run with a host volume over %s: exit %d, stdout %q, stderr %q, hook log %q; want the hook to refuse with %q"
	assert.NotEqual(t, 0, code, why, c.rt.name, dest, code, out, stderr, log, msg)
	assert.Empty(t, out, why, c.rt.name, dest, code, out, stderr, log, msg)
	assert.Contains(t, string(log), msg, why, c.rt.name, dest, code, out, stderr, log, msg)
}
