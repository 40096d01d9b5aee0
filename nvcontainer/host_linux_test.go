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
	d := &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: dev}}
	h, rep, err := nvcontainer.PrepareHost(t.Context(), &nvcontainer.HostOptions{Driver: d, Backend: "procfs", IMEXChannels: []uint32{3}})
	if err != nil || rep != nil || len(h.Devices.GPUs) != 8 {
		t.Fatalf("without LoadModules: report %+v, %v", rep, err)
	}
	if ents, _ := os.ReadDir(dev); len(ents) != 0 {
		t.Fatalf("without LoadModules, nodes were made: %v", ents)
	}
	h, rep, err = nvcontainer.PrepareHost(t.Context(), &nvcontainer.HostOptions{Driver: d, Backend: "procfs", LoadModules: true, IMEXChannels: []uint32{3}})
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
	_, rep, err = nvcontainer.PrepareHost(t.Context(), &nvcontainer.HostOptions{Driver: &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: t.TempDir(), Dev: dev}}, LoadModules: true})
	if err == nil {
		t.Errorf("an empty procfs: report %+v, no error", rep)
	}
}

// TestPrepareHostDriverRoot is --root R --load-kmods without --dev-root:
// modprobe (a busybox script that exists only inside R, named by the
// simulated procfs's sys/kernel/modprobe) runs chrooted into R and
// "loads" each module into R's proc/modules, and the nodes are made in
// R/dev, where the simulated host has plain files in their place.
func TestPrepareHostDriverRoot(t *testing.T) {
	testutil.RequireRoot(t) // mknod, chroot
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		testutil.Unavailable(t, "needs a static busybox at /bin/busybox: %v", err)
	}
	fh, err := fakehost.Generate(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/busybox sh\necho \"$1 1 0 - Live 0x0 (PO)\" >> /proc/modules\necho \"$1\" >> /nvc-test/ran\n"
	testutil.BuildTree(t, fh.Root, "dir nvc-test\ndir proc/sys/kernel\nfile proc/sys/kernel/modprobe \"/nvc-test/modprobe\\n\"\n")
	for file, data := range map[string][]byte{"bin/busybox": bb, "nvc-test/modprobe": []byte(script)} {
		if err := os.WriteFile(filepath.Join(fh.Root, file), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(fh.ProcRoot, "modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(fh.SysRoot, "module")); err != nil {
		t.Fatal(err)
	}
	guardHostDev(t)
	d := &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Sys: fh.SysRoot}}
	h, rep, err := nvcontainer.PrepareHost(t.Context(), &nvcontainer.HostOptions{Driver: d, Backend: "procfs", LoadModules: true})
	if err != nil || rep == nil || !slices.Equal(rep.Loaded, []string{"nvidia", "nvidia_uvm", "nvidia_modeset"}) {
		t.Fatalf("PrepareHost: %v, report %+v", err, rep)
	}
	if ran, _ := os.ReadFile(filepath.Join(fh.Root, "nvc-test/ran")); string(ran) != "nvidia\nnvidia_uvm\nnvidia_modeset\n" {
		t.Errorf("modprobe inside the root ran for %q", ran)
	}
	for _, p := range []string{"nvidiactl", "nvidia0", "nvidia-uvm"} {
		fi, err := os.Lstat(filepath.Join(fh.Root, "dev", p))
		if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("<root>/dev/%s: %v (%v), want a character device", p, fi, err)
		}
	}
	if len(h.Devices.GPUs) != 8 {
		t.Errorf("host after creating nodes: %d GPUs", len(h.Devices.GPUs))
	}
}

// guardHostDev removes, when the test ends, the NVIDIA nodes it finds in
// the real /dev that were not there before: a PrepareHost that ignored
// the driver root would make them there.
func guardHostDev(t *testing.T) {
	t.Helper()
	before := map[string]bool{}
	glob := func() []string {
		m, _ := filepath.Glob("/dev/nvidia*")
		return m
	}
	for _, p := range glob() {
		before[p] = true
	}
	t.Cleanup(func() {
		for _, p := range glob() {
			if !before[p] {
				t.Errorf("%s was made in the host's /dev", p)
				os.RemoveAll(p)
			}
		}
	})
}
