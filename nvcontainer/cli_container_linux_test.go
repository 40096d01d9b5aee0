package nvcontainer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/nvcontainer"
)

// TestCLIContainerStandalone: without --pid, ROOTFS/proc must be the root
// of a procfs mount. Each rootfs is a test container's, seen from here
// through /proc/PID/root (its mounts included): a real procfs mounted
// there is accepted; what an image can ship (a tree of files shaped like
// /proc/<ppid>, a symlink to the host's /proc) and a bind of a procfs
// subdirectory are refused.
func TestCLIContainerStandalone(t *testing.T) {
	fakeProc := "file proc/" + strconv.Itoa(os.Getppid()) + "/cgroup \"0::/host.slice\\n\"\nsymlink proc/" + strconv.Itoa(os.Getppid()) + "/ns/mnt /proc/1/ns/mnt\n"
	tests := []struct {
		name string
		opts container.Options
		bind bool // bind-mount the procfs's 1 dir over ROOTFS/proc
		err  string
	}{
		{"procfs mounted", container.Options{MountProc: true}, false, ""},
		{"a tree of files", container.Options{Spec: fakeProc}, false, "not procfs"},
		{"a symlink to the host's /proc", container.Options{Spec: "symlink proc /proc\n"}, false, "not procfs"},
		{"no proc", container.Options{Spec: "dir etc\n"}, false, "no such file"},
		{"a procfs subdirectory", container.Options{MountProc: true}, true, "not procfs's root directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := container.Start(t, &tt.opts)
			if tt.bind {
				if out, err := c.Exec(t, "mount", "--bind", c.Rootfs+"/proc/1", c.Rootfs+"/proc"); err != nil {
					t.Fatalf("bind: %v: %s", err, out)
				}
			}
			rootfs := c.Path("/")
			ctr, proc, err := nvcontainer.CLIContainer(0, rootfs)
			if tt.err == "" {
				if err != nil || ctr.PID != os.Getppid() || ctr.Rootfs != rootfs || proc != filepath.Join(rootfs, "proc") {
					t.Errorf("got %+v, %q, %v; want the parent %d and ROOTFS/proc", ctr, proc, err, os.Getppid())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "standalone mode (no --pid)") {
				t.Fatalf("got %+v, %q, %v; want an error saying %q", ctr, proc, err, tt.err)
			}
			if tt.err != "no such file" && !errors.Is(err, nvcontainer.ErrNotProcfs) {
				t.Errorf("%v does not match ErrNotProcfs", err)
			}
			if _, _, err := nvcontainer.CLIContainer(os.Getpid(), rootfs); err != nil {
				t.Errorf("with a PID the rootfs's proc is not read: %v", err)
			}
		})
	}
}
