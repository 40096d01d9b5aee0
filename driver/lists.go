package driver

import "github.com/go-nvc/nvc/capabilities"

// The library lists of libnvidia-container (src/nvc_info.c). Names are
// matched as prefixes of ld.so.cache keys.
var (
	utilityLibs = []string{"libnvidia-ml.so", "libnvidia-cfg.so", "libnvidia-nscq.so"}
	computeLibs = []string{
		"libcuda.so", "libcudadebugger.so", "libnvidia-opencl.so", "libnvidia-gpucomp.so",
		"libnvidia-ptxjitcompiler.so", "libnvidia-fatbinaryloader.so", "libnvidia-allocator.so",
		"libnvidia-compiler.so", "libnvidia-pkcs11.so", "libnvidia-pkcs11-openssl3.so",
		"libnvidia-nvvm.so", "libnvidia-tileiras.so",
	}
	videoLibs    = []string{"libvdpau_nvidia.so", "libnvidia-encode.so", "libnvidia-opticalflow.so", "libnvcuvid.so"}
	graphicsLibs = []string{
		"libnvidia-eglcore.so", "libnvidia-glcore.so", "libnvidia-tls.so", "libnvidia-glsi.so",
		"libnvidia-fbc.so", "libnvidia-ifr.so", "libnvidia-rtcore.so", "libnvoptix.so",
	}
	glvndLibs = []string{
		"libGLX_nvidia.so", "libEGL_nvidia.so", "libGLESv2_nvidia.so", "libGLESv1_CM_nvidia.so",
		"libnvidia-glvkspirv.so", "libnvidia-cbl.so",
	}
	// compatGLLibs are looked up instead of glvndLibs with NoGLVND; a
	// candidate must need libnvidia-glcore or libnvidia-eglcore.
	compatGLLibs = []string{"libGL.so", "libEGL.so", "libGLESv1_CM.so", "libGLESv2.so"}
	ngxLibs      = []string{"libnvidia-ngx.so"}
	// eglPlatformLibs are the EGL external platform libraries the NVIDIA
	// Container Toolkit adds with graphics (libnvidia-container has none).
	// They carry versions of their own (libnvidia-egl-wayland.so.1.1.13),
	// not the driver's; each goes with its platform file (eglPlatforms).
	eglPlatformLibs = []string{
		"libnvidia-egl-gbm.so", "libnvidia-egl-wayland.so", "libnvidia-egl-wayland2.so",
		"libnvidia-egl-xcb.so", "libnvidia-egl-xlib.so",
	}
	// dxcoreLibs are added on WSL, whatever the capabilities.
	dxcoreLibs = []string{"libdxcore.so"}
)

// The binary lists.
var (
	utilityBins = []string{"nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nv-fabricmanager"}
	computeBins = []string{"nvidia-cuda-mps-control", "nvidia-cuda-mps-server"}
)

// The daemons' sockets.
const (
	persistencedSocket = "/var/run/nvidia-persistenced/socket"
	fabricmanagerSock  = "/var/run/nvidia-fabricmanager/socket"
)

// libraryNames returns the list names caps needs, in libnvidia-container's
// lookup order (utility, compute, ngx, video, graphics, GLVND or compat).
// caps should be expanded (capabilities.Set.Expand).
func (d *Driver) libraryNames(caps capabilities.Set) []string {
	var names []string
	add := func(c capabilities.Capability, list ...[]string) {
		if caps.Has(c) {
			for _, l := range list {
				names = append(names, l...)
			}
		}
	}
	add(capabilities.Utility, utilityLibs)
	add(capabilities.Compute, computeLibs)
	add(capabilities.NGX, ngxLibs)
	add(capabilities.Video, videoLibs)
	if d.opts.NoGLVND {
		add(capabilities.Graphics, graphicsLibs, compatGLLibs)
	} else {
		add(capabilities.Graphics, graphicsLibs, glvndLibs)
	}
	if d.wsl {
		names = append(names, dxcoreLibs...)
	}
	return names
}

// binaryNames returns the binaries caps (not expanded) needs.
func (d *Driver) binaryNames(caps capabilities.Set) []string {
	var names []string
	if caps.Has(capabilities.Utility) {
		names = append(names, utilityBins...)
	}
	if caps.Has(capabilities.Compute) && !d.opts.NoMPS {
		names = append(names, computeBins...)
	}
	return names
}

// allLibraryNames is every name of every list, for the cache index.
func allLibraryNames() []string {
	var all []string
	for _, l := range [][]string{utilityLibs, computeLibs, videoLibs, graphicsLibs, glvndLibs, compatGLLibs, ngxLibs, dxcoreLibs, eglPlatformLibs, toolkitLibs} {
		all = append(all, l...)
	}
	return all
}
