// Package liblink is the one rule for the library links that Apply
// (package nvcontainer) and the CDI hook's create-symlinks make in a
// container, so that both do the same with what the image already has at
// a link's path:
//
//   - A SONAME link (libnvidia-ml.so.1 -> libnvidia-ml.so.550.54.15), as
//     ldconfig would make it: missing, it is created; the same link is
//     kept; a symlink to elsewhere (a stale one from a committed GPU
//     container) is replaced atomically; a regular file, a directory or
//     anything else is left as it is and is an error naming it: the
//     image's own library would otherwise be loaded in place of the
//     driver's, or silently lost.
//   - Any other link (libcuda.so, libGLX_indirect.so.0,
//     libnvidia-opticalflow.so, gbm/nvidia-drm_gbm.so): whatever the image
//     has at the path is kept (a CUDA image's libcuda.so stub link, Mesa's
//     libGLX_indirect.so.0), as libnvidia-container keeps it, and reported
//     so that the caller can say so.
//
// It is cgo-free: nvcontainer/cdihook, the static nvidia-cdi-hook's logic,
// imports it.
package liblink

import (
	"path"
	"strings"
)

// IsSONAME reports whether a link at linkPath to target is a SONAME link:
// target is a file name in the link's directory, the link's name is a
// versioned library name (lib<x>.so.<n>...) and both have the same stem
// (lib<x>.so). The links a plan marks Replace are exactly these; the CDI
// hook, which gets only TARGET::LINK pairs, classifies with it.
func IsSONAME(linkPath, target string) bool {
	base := path.Base(linkPath)
	if strings.Contains(target, "/") || target == base {
		return false
	}
	stem, versioned := soStem(base)
	tstem, _ := soStem(target)
	return versioned && stem != "" && stem == tstem
}

// soStem returns name up to and including ".so", and whether a version
// follows (".so.1"); "" when name has no ".so".
func soStem(name string) (string, bool) {
	i := strings.Index(name, ".so")
	if i < 0 {
		return "", false
	}
	rest := name[i+3:]
	if rest != "" && !strings.HasPrefix(rest, ".") {
		return "", false
	}
	return name[:i+3], len(rest) > 1
}
