package devices_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/testutil"
)

// TestCreateNodesChmodRace races CreateNodes against a process that keeps
// replacing /dev/nvidia0 by a node with the wrong mode and then by a
// symlink to a victim file. CreateNodes fixes the mode of a node it has
// checked through a descriptor; if it then chmodded by name, the symlink
// swapped in between would make it chmod the victim 0666. The victim's
// mode must never change.
func TestCreateNodesChmodRace(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	dev := t.TempDir()
	victim := filepath.Join(t.TempDir(), "shadow")
	require.NoError(t, os.WriteFile(victim, []byte("secret"), 0o600))
	require.NoError(t, os.Chmod(victim, 0o600))
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		swapLoop(dev, victim, &stop)
	}()
	deadline := time.Now().Add(3 * time.Second)
	runs := 0
	for ; time.Now().Before(deadline) && runs < 5000; runs++ {
		devices.CreateNodes(t.Context(), &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}}) // errors are the race's
		if victimMode(t, victim) != 0o600 {
			break
		}
	}
	stop.Store(true)
	<-done
	m := victimMode(t, victim)
	require.Equal(t, uint32(0o600), m, "after %d runs the victim outside the dev root has mode %o: CreateNodes chmodded through a symlink", runs, m)
	t.Logf("%d CreateNodes runs raced", runs)
}

func swapLoop(dev, victim string, stop *atomic.Bool) {
	node, tmpNode, tmpLink := filepath.Join(dev, "nvidia0"), filepath.Join(dev, ".n"), filepath.Join(dev, ".l")
	for !stop.Load() {
		unix.Mknod(tmpNode, unix.S_IFCHR|0o600, int(unix.Mkdev(195, 0)))
		unix.Rename(tmpNode, node)
		unix.Symlink(victim, tmpLink)
		unix.Rename(tmpLink, node)
	}
}

func victimMode(t *testing.T, p string) uint32 {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(p, &st))
	return st.Mode & 0o7777
}
