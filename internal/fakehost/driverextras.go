package fakehost

import (
	"fmt"
	"path"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/fstree"
)

// driverBinaries are libnvidia-container's utility and compute binaries.
var driverBinaries = []string{
	"nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nv-fabricmanager",
	"nvidia-cuda-mps-control", "nvidia-cuda-mps-server",
}

// gspFirmware are the GSP firmware files of 525 and later drivers.
var gspFirmware = []string{"gsp_ga10x.bin", "gsp_tu10x.bin"}

// binaries returns the driver's programs in usr/bin: real x86-64
// executables that exit 0.
func binaries() ([]fstree.Entry, error) {
	o := &elfwriter.Object{Interp: "/lib64/ld-linux-x86-64.so.2"}
	b, err := o.Bytes()
	if err != nil {
		return nil, err
	}
	var es []fstree.Entry
	for _, name := range driverBinaries {
		es = append(es, fstree.Entry{Kind: fstree.File, Path: "usr/bin/" + name, Mode: 0o755, Content: b})
	}
	return es, nil
}

// firmware returns the GSP firmware of ver and, as a decoy, of old, under
// /lib/firmware (usr/lib/firmware behind the merged-/usr link).
func firmware(ver, old string) []fstree.Entry {
	var es []fstree.Entry
	for _, v := range []string{ver, old} {
		for _, name := range gspFirmware {
			es = append(es, fstree.Entry{Kind: fstree.File, Path: path.Join("usr/lib/firmware/nvidia", v, name),
				Mode: 0o644, Content: fmt.Appendf(nil, "GSP firmware %s %s\n", v, name)})
		}
	}
	return es
}

// ipcs returns the daemons' sockets under /run, the /var/run link to it, and
// the MPS pipe directory.
func ipcs() []fstree.Entry {
	return []fstree.Entry{
		{Kind: fstree.Socket, Path: "run/nvidia-persistenced/socket", Mode: 0o777},
		{Kind: fstree.Socket, Path: "run/nvidia-fabricmanager/socket", Mode: 0o777},
		{Kind: fstree.Dir, Path: "var", Mode: 0o755},
		{Kind: fstree.Symlink, Path: "var/run", Target: "../run"},
		{Kind: fstree.Dir, Path: "tmp/nvidia-mps", Mode: 0o755},
	}
}

// configs returns the graphics and OpenCL configuration files the driver
// installs (NVIDIA Container Toolkit's list), where a runfile install puts
// them.
func configs() []fstree.Entry {
	return []fstree.Entry{
		file("usr/share/glvnd/egl_vendor.d/10_nvidia.json", icdJSON("ICD", "libEGL_nvidia.so.0", "1.0.0")),
		file("usr/share/egl/egl_external_platform.d/15_nvidia_gbm.json", icdJSON("ICD", "libnvidia-egl-gbm.so.1", "1.0.0")),
		file("usr/share/egl/egl_external_platform.d/10_nvidia_wayland.json", icdJSON("ICD", "libnvidia-egl-wayland.so.1", "1.0.0")),
		file("usr/share/nvidia/nvoptix.bin", "optix shader cache\n"),
		file("usr/share/X11/xorg.conf.d/nvidia-drm-outputclass.conf", xorgOutputClass),
		file("etc/vulkan/icd.d/nvidia_icd.json", icdJSON("ICD", "libGLX_nvidia.so.0", "1.0.0")),
		file("etc/vulkan/implicit_layer.d/nvidia_layers.json", icdJSON("layer", "libnvidia-vulkan-producer.so", "1.0.0")),
		file("etc/OpenCL/vendors/nvidia.icd", "libnvidia-opencl.so.1\n"),
	}
}

func icdJSON(kind, lib, format string) string {
	return fmt.Sprintf("{\n    \"file_format_version\" : %q,\n    %q : {\n        \"library_path\" : %q\n    }\n}\n", format, kind, lib)
}

const xorgOutputClass = `Section "OutputClass"
    Identifier "nvidia"
    MatchDriver "nvidia-drm"
    Driver "nvidia"
EndSection
`

// xorgModules returns the X driver and GLX extension under the layout's
// xorg module dir (usr/lib/xorg on Debian, usr/lib64/xorg on Fedora).
func xorgModules(ver string, l Layout) ([]fstree.Entry, error) {
	dir := "usr/lib/xorg/modules"
	if l == Fedora {
		dir = "usr/lib64/xorg/modules"
	}
	drv, err := elfwriter.Library("").Bytes()
	if err != nil {
		return nil, err
	}
	glx := libFile{dir: dir + "/extensions", file: "libglxserver_nvidia.so." + ver,
		links: []string{"libglxserver_nvidia.so"},
		obj:   elfwriter.Library("libglxserver_nvidia.so")}
	es, err := glx.entries()
	if err != nil {
		return nil, err
	}
	return append(es, fstree.Entry{Kind: fstree.File, Path: dir + "/drivers/nvidia_drv.so", Mode: 0o644, Content: drv}), nil
}
