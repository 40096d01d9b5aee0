package fakehost

import (
	"fmt"
	"path"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/fstree"
)

// The simulated Jetson AGX Orin's facts (JetPack 6.0, L4T R36.3.0).
const (
	TegraRelease     = "36.3.0"
	TegraCUDAVersion = "12.2"
	// TegraLibDir is where L4T keeps the GPU driver's libraries.
	TegraLibDir = "/usr/lib/aarch64-linux-gnu/tegra"
	// TegraSpecDir is the CSV mount spec directory inside the root.
	TegraSpecDir = "/etc/nvidia-container-runtime/host-files-for-container.d"
)

// The majors of the simulated Tegra nodes: nvmap is a misc device, the
// nvhost, nvgpu and host1x-fence majors are dynamic on a real board.
const (
	MajorMisc        = 10
	MajorNvhost      = 507
	MajorNvgpu       = 508
	MajorHost1xFence = 509
	MajorDRM         = 226
)

// TegraOptions change the generated Jetson host. A nil *TegraOptions means
// plain files for device nodes.
type TegraOptions struct {
	// RealNodes makes the nodes under dev/ real character devices (needs
	// CAP_MKNOD). False: plain files standing in for them, which CSV mode
	// skips as not character devices.
	RealNodes bool
}

// TegraHost is a generated Jetson host: no /proc/driver/nvidia and no
// NVML, the driver in TegraLibDir, the L4T release file and the CSV mount
// specs the toolkit's CSV mode reads.
type TegraHost struct {
	// Root is the host's file system image; ProcRoot and DevRoot are
	// Root/proc and Root/dev.
	Root, ProcRoot, DevRoot string
	// SpecDir is Root + TegraSpecDir.
	SpecDir string
	// Release is the L4T release, CUDAVersion the CUDA version of JetPack.
	Release, CUDAVersion string
}

// GenerateTegra writes a Jetson AGX Orin host into dir, which must exist
// and be empty.
func GenerateTegra(dir string, opts *TegraOptions) (*TegraHost, error) {
	var o TegraOptions
	if opts != nil {
		o = *opts
	}
	if err := checkEmpty(dir); err != nil {
		return nil, err
	}
	es, err := tegraEntries()
	if err != nil {
		return nil, err
	}
	if err := fstree.Build(dir, es, &fstree.Options{CharAsFile: !o.RealNodes}); err != nil {
		return nil, fmt.Errorf("generating Tegra host in %s: %w", dir, err)
	}
	return &TegraHost{Root: dir, ProcRoot: path.Join(dir, "proc"), DevRoot: path.Join(dir, "dev"),
		SpecDir: path.Join(dir, TegraSpecDir), Release: TegraRelease, CUDAVersion: TegraCUDAVersion}, nil
}

// tegraLibs are the driver's libraries in TegraLibDir: file name and
// SONAME link (empty: the file is its own SONAME).
var tegraLibs = []struct{ file, soname string }{
	{"libcuda.so.1.1", "libcuda.so.1"},
	{"libnvidia-ptxjitcompiler.so." + TegraRelease, "libnvidia-ptxjitcompiler.so.1"},
	{"libnvrm_gpu.so", ""},
	{"libnvrm_mem.so", ""},
	{"libnvrm_host1x.so", ""},
	{"libnvos.so", ""},
}

func tegraEntries() ([]fstree.Entry, error) {
	lib := func(p, soname string) (fstree.Entry, error) {
		b, err := elfwriter.Library(soname, "libc.so.6").Bytes()
		return fstree.Entry{Kind: fstree.File, Path: p, Mode: 0o644, Content: b}, err
	}
	libDir := TegraLibDir[1:]
	es := []fstree.Entry{
		{Kind: fstree.Dir, Path: "proc"},
		{Kind: fstree.File, Path: "etc/nv_tegra_release", Content: []byte(
			"# R36 (release), REVISION: 3.0, GCID: 36191598, BOARD: generic, EABI: aarch64, DATE: Mon May  6 17:34:21 UTC 2024\n" +
				"# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\nTARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n")},
		{Kind: fstree.File, Path: "sys/devices/soc0/family", Content: []byte("Tegra\n")},
		{Kind: fstree.Dir, Path: libDir},
	}
	for _, l := range tegraLibs {
		soname := l.soname
		if soname == "" {
			soname = l.file
		}
		e, err := lib(path.Join(libDir, l.file), soname)
		if err != nil {
			return nil, err
		}
		es = append(es, e)
		if l.soname != "" {
			es = append(es, fstree.Entry{Kind: fstree.Symlink, Path: path.Join(libDir, l.soname), Target: l.file})
		}
	}
	egl, err := lib("usr/lib/aarch64-linux-gnu/tegra-egl/libEGL_nvidia.so.0", "libEGL_nvidia.so.0")
	if err != nil {
		return nil, err
	}
	infer, err := lib("usr/lib/aarch64-linux-gnu/libnvinfer.so.8.6.2", "libnvinfer.so.8")
	if err != nil {
		return nil, err
	}
	es = append(es, egl, infer,
		fstree.Entry{Kind: fstree.Symlink, Path: path.Join(libDir, "libcuda.so"), Target: "libcuda.so.1.1"},
		fstree.Entry{Kind: fstree.Symlink, Path: "usr/lib/aarch64-linux-gnu/libcuda.so", Target: "tegra/libcuda.so"},
		// A link whose absolute target is read inside the root, never on
		// the host running the test.
		fstree.Entry{Kind: fstree.Symlink, Path: "usr/lib/aarch64-linux-gnu/libnvos.so", Target: TegraLibDir + "/libnvos.so"},
	)
	es = append(es, tegraNodes()...)
	return append(es, tegraSpecs()...), nil
}

func tegraNodes() []fstree.Entry {
	node := func(p string, major, minor int) fstree.Entry { return devNode("dev/"+p, major, minor, 0o666) }
	return []fstree.Entry{
		node("nvmap", MajorMisc, 121),
		node("nvhost-ctrl-gpu", MajorNvhost, 0),
		node("nvhost-gpu", MajorNvhost, 1),
		node("nvhost-as-gpu", MajorNvhost, 2),
		node("nvhost-prof-gpu", MajorNvhost, 3),
		node("host1x-fence", MajorHost1xFence, 0),
		{Kind: fstree.Dir, Path: "dev/nvgpu/igpu0"},
		node("nvgpu/igpu0/ctrl", MajorNvgpu, 0),
		node("nvgpu/igpu0/as", MajorNvgpu, 1),
		node("nvgpu/igpu0/channel", MajorNvgpu, 2),
		{Kind: fstree.Dir, Path: "dev/dri"},
		node("dri/card0", MajorDRM, 0),
		node("dri/renderD128", MajorDRM, 128),
	}
}

// TegraDevicesCSV and TegraDriversCSV are the base mount spec files of
// the simulated host; TegraExtraCSV is a non-base file, read only with
// NVIDIA_REQUIRE_JETPACK=csv-mounts=all.
const (
	TegraDevicesCSV = `# Device nodes of the Orin iGPU (generated by nvc's fakehost)
dev, /dev/nvmap
dev, /dev/nvhost-ctrl-gpu
dev, /dev/nvhost-gpu
dev, /dev/nvhost-as-gpu
dev, nvhost-prof-gpu
dev, /dev/nvhost-dbg-gpu
dev, /dev/host1x-fence
dev, /dev/nvgpu/igpu0/*
dev, /dev/dri/card*
dev, /dev/dri/renderD*
`
	TegraDriversCSV = `# The GPU driver
lib, ` + TegraLibDir + `/libcuda.so.1.1
lib, ` + TegraLibDir + `/libnvidia-ptxjitcompiler.so.` + TegraRelease + `
lib, ` + TegraLibDir + `/libnvrm_*.so
sym, ` + TegraLibDir + `/libcuda.so.1
sym, ` + TegraLibDir + `/libcuda.so
sym, /usr/lib/aarch64-linux-gnu/libcuda.so
sym, ` + TegraLibDir + `/libnvidia-ptxjitcompiler.so.1
sym, /usr/lib/aarch64-linux-gnu/libnvos.so

dir, /usr/lib/aarch64-linux-gnu/tegra-egl
`
	TegraExtraCSV = `lib, /usr/lib/aarch64-linux-gnu/libnvinfer.so.8.6.2
`
)

func tegraSpecs() []fstree.Entry {
	dir := TegraSpecDir[1:]
	return []fstree.Entry{
		{Kind: fstree.Dir, Path: dir},
		{Kind: fstree.File, Path: dir + "/devices.csv", Content: []byte(TegraDevicesCSV)},
		{Kind: fstree.File, Path: dir + "/drivers.csv", Content: []byte(TegraDriversCSV)},
		{Kind: fstree.File, Path: dir + "/tensorrt.csv", Content: []byte(TegraExtraCSV)},
	}
}
