package nvcontainer

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
)

// MountDriverStore is a file of the WSL driver store, bound at its own
// path (ro,nosuid,nodev), as the NVIDIA Container Toolkit's wsl mode binds
// it: libcuda.so.1.1 and the loaders find each other there.
const MountDriverStore MountKind = "driver-store"

// inDriverStore reports whether f is a file of the host's WSL driver
// store, which planDriverStore binds at its own path.
func (pl *planner) inDriverStore(f driver.File) bool {
	s := pl.host.Driver.WSLDriverStore()
	return s != "" && strings.HasPrefix(f.Path, s+"/")
}

// planDriverStore binds the WSL driver store files at their own paths.
// Its libraries join the plan's libraries, so that they get their SONAME
// links (libcuda.so.1 → libcuda.so.1.1) and their dir joins the loader
// cache; its programs (nvidia-smi) get a link in the binary dir, which
// the toolkit creates, instead of a bind of their own.
func (pl *planner) planDriverStore() {
	for _, f := range pl.files.DriverStore {
		if !pl.mount(Mount{Kind: MountDriverStore, Source: f.HostPath, Target: f.ContainerPath}) {
			continue
		}
		switch {
		case strings.Contains(path.Base(f.Path), ".so"):
			pl.libs = append(pl.libs, plannedLib{kind: MountDriverStore, target: f.ContainerPath, soname: pl.linkableSoname(f)})
		case isStoreBinary(f):
			pl.storeBins = append(pl.storeBins, f.ContainerPath)
		}
	}
}

// isStoreBinary reports whether a driver store file is a program the
// container finds on its PATH: nvidia-smi.
func isStoreBinary(f driver.File) bool { return f.Name == "nvidia-smi" }

// storeBinLinks links each driver store program from the binary dir.
func (pl *planner) storeBinLinks(lp *linkPlan) {
	for _, t := range pl.storeBins {
		lp.add(path.Join(pl.p.Layout.BinDir, path.Base(t)), t)
	}
}

// isDXG reports whether n is WSL2's /dev/dxg, bound whatever the
// capabilities (libnvidia-container: "always on WSL").
func isDXG(n devices.Node) bool { return n.Path == devices.DevDXG }

// onWSL reports whether roots' dev root has dxg: a WSL2 host.
func onWSL(roots driver.Roots) bool {
	_, err := os.Stat(filepath.Join(roots.WithDefaults().Dev, "dxg"))
	return err == nil
}
