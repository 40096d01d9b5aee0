package nvcontainer

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-nvc/nvc/driver"
)

// plannedLib is a library mounted into the container, for the symlinks
// next to it.
type plannedLib struct {
	kind   MountKind
	target string
	soname string // empty when unknown (an image compat library)
}

// kindOptions are the flags of each kind (as libnvidia-container mounts them), in
// the order ro, nosuid, nodev, noexec.
func kindOptions(k MountKind) []string {
	switch k {
	case MountIPC:
		return []string{"nosuid", "nodev", "noexec"}
	case MountDevice:
		return []string{"ro", "nosuid", "noexec"}
	case MountProc:
		return []string{"ro", "nosuid", "nodev", "noexec"}
	case MountCapsDir:
		return []string{"nosuid", "noexec"}
	}
	return []string{"ro", "nosuid", "nodev"}
}

// mount adds m to the plan's bind mounts with its kind's flags, unless its
// target is already planned (the first mount of a target wins).
func (pl *planner) mount(m Mount) bool {
	if pl.targets[m.Target] {
		return false
	}
	pl.targets[m.Target] = true
	m.Options = kindOptions(m.Kind)
	pl.p.Mounts = append(pl.p.Mounts, m)
	return true
}

// planDriverFiles lists the driver's files in nvidia-container-cli's
// order: binaries, libraries, 32-bit libraries, (WSL) the driver store
// files, the image's compat libraries (mount mode), firmware, then the
// toolkit's configuration files, then IPC sockets and the MPS pipe dir.
func (pl *planner) planDriverFiles() {
	l := &pl.p.Layout
	for _, f := range pl.files.Binaries {
		if pl.inDriverStore(f) {
			continue // bound by planDriverStore, linked into BinDir
		}
		pl.mount(Mount{Kind: MountBinary, Source: f.HostPath, Target: path.Join(l.BinDir, path.Base(f.ContainerPath))})
	}
	pl.planLibraries(MountLibrary, pl.files.Libraries, &l.LibDir)
	pl.planLibraries(MountLibrary32, pl.files.Libraries32, &l.Lib32Dir)
	pl.planDriverStore()
	pl.planCompatMounts()
	for _, f := range pl.files.Firmware {
		pl.mount(Mount{Kind: MountFirmware, Source: f.HostPath, Target: f.ContainerPath})
	}
	for _, f := range pl.files.Configs {
		pl.mount(Mount{Kind: MountConfig, Source: f.HostPath, Target: f.ContainerPath})
	}
	for _, f := range pl.files.IPCs {
		pl.mount(Mount{Kind: MountIPC, Source: f.HostPath, Target: f.ContainerPath, Dir: isHostDir(f.HostPath)})
	}
}

// planLibraries mounts libraries flattened into *dir under their real,
// versioned names; with Layout.HostPaths they keep their host paths and
// *dir becomes the first one's directory.
func (pl *planner) planLibraries(kind MountKind, files []driver.File, dir *string) {
	for _, f := range files {
		target := path.Join(*dir, path.Base(f.Path))
		if pl.p.Layout.HostPaths {
			target = f.Path
			if *dir == "" {
				*dir = path.Dir(f.Path)
			}
		}
		if pl.mount(Mount{Kind: kind, Source: f.HostPath, Target: target}) {
			pl.libs = append(pl.libs, plannedLib{kind: kind, target: target, soname: pl.linkableSoname(f)})
		}
	}
}

// linkableSoname is f's SONAME when it can name a link beside the
// library: a plain file name. A SONAME read from a driver-root ELF file
// such as "../../../etc/ld.so.preload" would put the link elsewhere in the
// rootfs; it is ignored with a warning, as the ldcache links ignore it.
func (pl *planner) linkableSoname(f driver.File) string {
	s := f.Soname
	if s == "" || (s != "." && s != ".." && !strings.Contains(s, "/")) {
		return s
	}
	pl.warn(fmt.Sprintf("ignoring SONAME %q of %s: not a file name", s, f.HostPath))
	return ""
}

// planCompatMounts mounts the image's compat libraries (mount mode) into
// LibDir. Their source is inside the container's rootfs: ImagePath, which
// Apply resolves there; Source names it on the host for a reader.
func (pl *planner) planCompatMounts() {
	for _, l := range pl.compatMounts {
		target := path.Join(pl.p.Layout.LibDir, path.Base(l))
		src := filepath.Join(pl.ctr.Rootfs, filepath.FromSlash(l))
		if pl.mount(Mount{Kind: MountCompat, Source: src, Target: target, ImagePath: l}) {
			pl.libs = append(pl.libs, plannedLib{kind: MountCompat, target: target})
		}
	}
}

// isHostDir reports whether a host file is a directory (the MPS pipe dir
// among the IPC paths).
func isHostDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// planLDCache lists the directories the loader cache must cover: the
// library dirs files were mounted into.
func (pl *planner) planLDCache() {
	seen := map[string]bool{}
	for _, l := range pl.libs {
		d := path.Dir(l.target)
		if !seen[d] {
			seen[d] = true
			pl.p.LDCache.Dirs = append(pl.p.LDCache.Dirs, d)
		}
	}
}
