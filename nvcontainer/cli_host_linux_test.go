package nvcontainer_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer"
)

// PrepareHost creates the missing nodes only with LoadModules, then opens
// the host from them.
func TestPrepareHost(t *testing.T) {
	testutil.RequireRoot(t) // mknod
	fh, err := fakehost.Generate(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dev := t.TempDir()
	d := &driver.Options{Root: fh.Root, ProcRoot: fh.ProcRoot, DevRoot: dev}
	h, rep, err := nvcontainer.PrepareHost(&nvcontainer.HostOptions{Driver: d, Backend: "procfs", IMEXChannels: []uint32{3}})
	if err != nil || rep != nil || len(h.Devices.GPUs) != 8 {
		t.Fatalf("without LoadModules: report %+v, %v", rep, err)
	}
	if ents, _ := os.ReadDir(dev); len(ents) != 0 {
		t.Fatalf("without LoadModules, nodes were made: %v", ents)
	}
	h, rep, err = nvcontainer.PrepareHost(&nvcontainer.HostOptions{Driver: d, Backend: "procfs", LoadModules: true, IMEXChannels: []uint32{3}})
	if err != nil || rep == nil || rep.Skipped != "" {
		t.Fatalf("with LoadModules: report %+v, %v", rep, err)
	}
	var created []string
	for _, n := range rep.Created {
		created = append(created, n.Path)
	}
	for _, p := range []string{"/dev/nvidiactl", "/dev/nvidia7", "/dev/nvidia-caps-imex-channels/channel3"} {
		fi, err := os.Lstat(filepath.Join(dev, p[len("/dev/"):]))
		if !slices.Contains(created, p) || err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("%s: reported %v, on disk %v (%v)", p, slices.Contains(created, p), fi, err)
		}
	}
	if len(h.Devices.GPUs) != 8 || h.Driver.Version().NVRM != fh.DriverVersion {
		t.Errorf("host after creating nodes: %d GPUs, driver %+v", len(h.Devices.GPUs), h.Driver.Version())
	}
	// A failing step still returns the report.
	_, rep, err = nvcontainer.PrepareHost(&nvcontainer.HostOptions{Driver: &driver.Options{Root: fh.Root, ProcRoot: t.TempDir(), DevRoot: dev}, LoadModules: true})
	if err == nil {
		t.Errorf("an empty procfs: report %+v, no error", rep)
	}
}
