package driver

import (
	"path"
	"slices"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
)

// wslDriverStore holds one dir per WSL driver package (nv_dispi.inf_…),
// with nvidia-smi and the libraries NVIDIA ships for WSL.
const wslDriverStore = "/usr/lib/wsl/drivers"

// resolved is a path inside the root with every symlink resolved, and
// what lstat said of it.
type resolved struct {
	path         string // absolute, inside the root ("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15")
	mode         uint32 // st_mode
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
	// dirfd and name reach the file from its directory, while the
	// rootDir that resolved it is open.
	dirfd int
	name  string
}

func isDir(mode uint32) bool { return mode&0o170000 == 0o040000 }
func isReg(mode uint32) bool { return mode&0o170000 == 0o100000 }

// binDirs are the dirs binaries are searched in, in order.
func (l *lookup) binDirs() []string {
	var dirs []string
	if l.d.wsl {
		names, _ := l.r.readDir(wslDriverStore)
		slices.Sort(names)
		for _, n := range names {
			dirs = append(dirs, path.Join(wslDriverStore, n))
		}
	}
	for _, dir := range strings.Split(l.d.opts.Path, ":") {
		if dir == "" {
			dir = "."
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// firmwareDirs are the kernel's firmware search dirs, in its order.
func (l *lookup) firmwareDirs() []string {
	rel := l.d.opts.KernelRelease
	dirs := []string{"/lib/firmware/updates/" + rel, "/lib/firmware/updates", "/lib/firmware/" + rel, "/lib/firmware"}
	if p := l.d.opts.FirmwarePath; p != "" {
		dirs = append([]string{p}, dirs...)
	}
	return dirs
}

// firmware finds nvidia/<version>/gsp*.bin in the firmware dirs; for a name
// in several dirs, the first dir wins, as in the kernel's loader.
func (l *lookup) firmware() {
	ver := l.d.version.NVRM
	seen := make(map[string]bool)
	for _, dir := range l.firmwareDirs() {
		dir = path.Join(dir, "nvidia", ver)
		names, err := l.r.readDir(dir)
		if err != nil {
			continue
		}
		slices.Sort(names)
		for _, n := range names {
			if ok, _ := path.Match("gsp*.bin", n); !ok || seen[n] {
				continue
			}
			p := path.Join(dir, n)
			if res, err := l.r.resolve(p); err == nil && isReg(res.mode) {
				seen[n] = true
				f := l.file(Firmware, n, res, p)
				f.Path = p
				l.fs.Firmware = append(l.fs.Firmware, f)
			}
		}
	}
	if len(l.fs.Firmware) == 0 {
		l.warn(Firmware, "/lib/firmware/nvidia/"+ver+"/gsp*.bin")
	}
}

// Configuration files (NVIDIA Container Toolkit's lists), relative to the
// config dirs.
var (
	graphicsConfigs = []string{"glvnd/egl_vendor.d/10_nvidia.json"}
	// eglPlatforms are the EGL external platform files, each with the
	// library it names: a file is given only with its library, so that no
	// platform points at a library the container lacks.
	eglPlatforms = []struct{ config, lib string }{
		{"egl/egl_external_platform.d/15_nvidia_gbm.json", "libnvidia-egl-gbm.so"},
		{"egl/egl_external_platform.d/10_nvidia_wayland.json", "libnvidia-egl-wayland.so"},
		{"egl/egl_external_platform.d/09_nvidia_wayland2.json", "libnvidia-egl-wayland2.so"},
		{"egl/egl_external_platform.d/20_nvidia_xcb.json", "libnvidia-egl-xcb.so"},
		{"egl/egl_external_platform.d/20_nvidia_xlib.json", "libnvidia-egl-xlib.so"},
	}
	graphicsLateConfigs = []string{"nvidia/nvoptix.bin"}
	// vulkanConfigs go under /etc in the container wherever they are found.
	vulkanConfigs = []string{
		"vulkan/icd.d/nvidia_icd.json",
		"vulkan/icd.d/nvidia_icd.x86_64.json",
		"vulkan/icd.d/nvidia_icd.aarch64.json",
		"vulkan/icd.d/nvidia_layers.json",
		"vulkan/implicit_layer.d/nvidia_layers.json",
	}
	computeConfigs = []string{"OpenCL/vendors/nvidia.icd"}
	displayConfigs = []string{"X11/xorg.conf.d/10-nvidia.conf", "X11/xorg.conf.d/nvidia-drm-outputclass.conf"}
	// configDirs are /etc and the default $XDG_DATA_DIRS.
	configDirs = []string{"/etc", "/usr/local/share", "/usr/share"}
)

func (l *lookup) configs(caps capabilities.Set) {
	if caps.Has(capabilities.Compute) {
		l.findConfigs(computeConfigs, configDirs, "")
	}
	if caps.Has(capabilities.Graphics) {
		l.findConfigs(graphicsConfigs, configDirs, "")
		l.findConfigs(l.platformConfigs(), configDirs, "")
		l.findConfigs(graphicsLateConfigs, configDirs, "")
		l.findConfigs(vulkanConfigs, append(slices.Clone(configDirs), "/"), "/etc")
	}
	if caps.Has(capabilities.Display) {
		l.findConfigs(displayConfigs, configDirs, "")
		l.xorgModules()
	}
}

// platformConfigs are the EGL platform files whose library was found.
func (l *lookup) platformConfigs() []string {
	var names []string
	for _, p := range eglPlatforms {
		if slices.Contains(l.platformLibs, p.lib) {
			names = append(names, p.config)
		}
	}
	return names
}

// findConfigs adds, for each name, the first regular file dirs have. Its
// container path is where it was found, or under containerDir if set.
func (l *lookup) findConfigs(names, dirs []string, containerDir string) {
	for _, n := range names {
		if f, ok := l.first(Config, n, dirs); ok {
			if containerDir != "" {
				f.ContainerPath = path.Join(containerDir, n)
			}
			l.fs.Configs = append(l.fs.Configs, f)
		}
	}
}

func (l *lookup) first(k Kind, name string, dirs []string) (File, bool) {
	for _, dir := range dirs {
		if _, err := l.r.dir(dir); err != nil {
			continue
		}
		p := path.Join(dir, name)
		if res, err := l.r.resolve(p); err == nil && isReg(res.mode) {
			return l.file(k, name, res, p), true
		}
	}
	return File{}, false
}

// xorgModules finds the X driver and GLX module in the toolkit's X module
// dirs: first beside the driver's libraries, then the usual prefixes.
func (l *lookup) xorgModules() {
	var dirs []string
	if len(l.fs.Libraries) > 0 {
		lib := path.Dir(l.fs.Libraries[0].Path)
		dirs = append(dirs, path.Join(lib, "nvidia/xorg"))
		dirs = append(dirs, xorgDirs(lib)...)
	}
	dirs = append(dirs, xorgDirs("/usr/lib")...)
	dirs = append(dirs, xorgDirs("/usr/lib64")...)
	for _, n := range []string{"nvidia_drv.so", "libglxserver_nvidia.so." + l.d.version.NVRM} {
		if f, ok := l.first(XorgModule, n, dirs); ok {
			l.fs.Configs = append(l.fs.Configs, f)
		}
	}
}

func xorgDirs(lib string) []string {
	m := path.Join(lib, "xorg/modules")
	return []string{m + "/drivers", m + "/extensions", m + "/updates/drivers", m + "/updates/extensions"}
}
