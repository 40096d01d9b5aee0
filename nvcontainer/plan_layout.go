package nvcontainer

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"syscall"
)

// ErrUnsupportedArch is matched by NewPlan's error for a Debian rootfs on
// an architecture libnvidia-container has no multiarch directories for
// (it knows amd64, arm64 and ppc64le).
var ErrUnsupportedArch = errors.New("unsupported architecture")

// The container directories of libnvidia-container.
const (
	binDir   = "/usr/bin"
	lib64Dir = "/usr/lib64"
	lib32Dir = "/usr/lib32"
	usrLib   = "/usr/lib"
	// noLib32Dir is the 32-bit dir on Debian architectures without a
	// 32-bit ABI libnvidia-container supports.
	noLib32Dir = "/var/empty"
)

// multiarch are the Debian library dirs (native, 32-bit) per GOARCH.
var multiarch = map[string][2]string{
	"amd64":   {"/usr/lib/x86_64-linux-gnu", "/usr/lib/i386-linux-gnu"},
	"arm64":   {"/usr/lib/aarch64-linux-gnu", noLib32Dir},
	"ppc64le": {"/usr/lib/powerpc64le-linux-gnu", noLib32Dir},
}

// inspectRootfs settles what depends on the image: the layout and the
// CUDA forward-compatibility decision. Without a rootfs, libraries keep
// their host paths and the image's compat libraries cannot be considered.
func (pl *planner) inspectRootfs() error {
	if pl.ctr.Rootfs == "" {
		pl.p.Layout = Layout{HostPaths: true, BinDir: binDir}
		pl.p.CUDACompat = CUDACompat{Mode: pl.compatMode(), Reason: "no container rootfs to inspect"}
		return nil
	}
	view, err := openRootfs(pl.rootfsView())
	if err != nil {
		return stageErr(StageContainer, fmt.Errorf("inspecting rootfs %q%s: %w", pl.ctr.Rootfs, pl.seenBy(), err))
	}
	defer view.close()
	if pl.p.Layout, err = chooseLayout(view, pl.opts.GOARCH); err != nil {
		return stageErr(StageContainer, err)
	}
	if err := pl.decideCompat(view); err != nil {
		return stageErr(StageContainer, err)
	}
	return nil
}

// rootfsView is the path the rootfs is inspected through: as the
// container's process sees it when there is one, else (ModeRootfsOnly, or
// no PID: a plan that is only printed) its own path.
func (pl *planner) rootfsView() string {
	if pl.ctr.PID <= 0 || pl.ctr.Mode == ModeRootfsOnly {
		return pl.ctr.Rootfs
	}
	procRoot := pl.opts.ProcRoot
	if procRoot == "" {
		procRoot = "/proc"
	}
	return filepath.Join(procRoot, strconv.Itoa(pl.ctr.PID), "root", pl.ctr.Rootfs)
}

// seenBy names the process the rootfs is inspected as, for errors.
func (pl *planner) seenBy() string {
	if pl.ctr.PID <= 0 || pl.ctr.Mode == ModeRootfsOnly {
		return ""
	}
	return fmt.Sprintf(" as process %d sees it", pl.ctr.PID)
}

// chooseLayout applies libnvidia-container's directory rules to a rootfs.
func chooseLayout(v rootfsView, goarch string) (Layout, error) {
	debian, err := exists(v, "/etc/debian_version")
	if err != nil {
		return Layout{}, err
	}
	if debian {
		dirs, ok := multiarch[goarch]
		if !ok {
			return Layout{}, fmt.Errorf("choosing library dirs for a Debian rootfs on GOARCH %q: %w", goarch, ErrUnsupportedArch)
		}
		return Layout{Debian: true, LibDir: dirs[0], Lib32Dir: dirs[1], BinDir: binDir}, nil
	}
	l := Layout{LibDir: lib64Dir, BinDir: binDir}
	l.Lib32Dir, err = chooseLib32(v, l.LibDir)
	return l, err
}

// chooseLib32 is /usr/lib32 if the rootfs has it, else /usr/lib if that
// exists and is not the native dir under another name, else /usr/lib32.
func chooseLib32(v rootfsView, libDir string) (string, error) {
	if ok, err := isDirIn(v, lib32Dir); ok || err != nil {
		return lib32Dir, err
	}
	usr, ok, err := resolveDir(v, usrLib)
	if !ok || err != nil {
		return lib32Dir, err
	}
	native, isNative, err := resolveDir(v, libDir)
	if err != nil {
		return "", err
	}
	if isNative && native == usr {
		return lib32Dir, nil
	}
	return usrLib, nil
}

// exists reports whether unsafePath resolves to anything in the rootfs.
func exists(v rootfsView, unsafePath string) (bool, error) {
	_, _, err := v.resolve(unsafePath)
	if absent(err) {
		return false, nil
	}
	return err == nil, err
}

// isDirIn reports whether unsafePath resolves to a directory.
func isDirIn(v rootfsView, unsafePath string) (bool, error) {
	_, ok, err := resolveDir(v, unsafePath)
	return ok, err
}

// resolveDir returns where unsafePath leads and whether it is a directory.
func resolveDir(v rootfsView, unsafePath string) (string, bool, error) {
	p, mode, err := v.resolve(unsafePath)
	if absent(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return p, isDirMode(mode), nil
}

// absent reports whether a resolution failed because nothing is there: a
// missing component, a file where a directory should be, a symlink loop.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)
}
