package nvcontainer

import (
	"path"
	"slices"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
)

// The links libnvidia-container and the toolkit add beside the libraries.
const (
	sonameLibcuda  = "libcuda.so.1"
	libcudaDevLink = "libcuda.so"
	glxIndirect    = "libGLX_indirect.so.0"
	opticalflow    = "libnvidia-opticalflow.so"
	opticalflow1   = "libnvidia-opticalflow.so.1"
	allocatorStem  = "libnvidia-allocator.so"
	gbmLink        = "gbm/nvidia-drm_gbm.so"
)

// linkPlan collects symlinks: the first link of a path wins, except a
// SONAME link, which points at the newest library with that SONAME.
type linkPlan struct {
	taken   map[string]bool // mount targets: never a link
	index   map[string]int  // link path → index in links
	version map[string][]int
	links   []Symlink
}

// planSymlinks lists the SONAME links ldconfig would make for the mounted
// libraries (libcuda.so.1 → libcuda.so.<version>) and the extra links of
// libnvidia-container and the toolkit: libcuda.so, libGLX_indirect.so.0,
// libnvidia-opticalflow.so and, with graphics, gbm/nvidia-drm_gbm.so.
func (pl *planner) planSymlinks() {
	lp := &linkPlan{taken: pl.targets, index: map[string]int{}, version: map[string][]int{}}
	stems := pl.sonamesByStem()
	for _, l := range pl.libs {
		dir, base := path.Split(l.target)
		soname := l.soname
		if soname == "" {
			soname = stems[dir+libStem(base)]
		}
		if soname != "" && soname != base {
			lp.soname(dir+soname, base)
		}
		pl.extraLinks(lp, l.kind, dir, base, soname)
	}
	pl.storeBinLinks(lp)
	pl.p.Symlinks = lp.links
}

// sonamesByStem maps "<dir>/libX.so" to the SONAME of the driver library
// mounted there, so that an image compat library gets the same link.
func (pl *planner) sonamesByStem() map[string]string {
	m := map[string]string{}
	for _, l := range pl.libs {
		dir, base := path.Split(l.target)
		if l.soname != "" {
			m[dir+libStem(base)] = l.soname
		}
	}
	return m
}

func (pl *planner) extraLinks(lp *linkPlan, kind MountKind, dir, base, soname string) {
	switch {
	case strings.HasPrefix(base, libcudaDevLink):
		lp.add(dir+libcudaDevLink, sonameLibcuda)
	case strings.HasPrefix(base, "libGLX_nvidia.so"):
		lp.add(dir+glxIndirect, base)
	case strings.HasPrefix(base, opticalflow):
		lp.add(dir+opticalflow, opticalflow1)
	case kind == MountLibrary && strings.HasPrefix(base, allocatorStem) && soname != "" && pl.exp.Has(capabilities.Graphics):
		lp.add(dir+gbmLink, "../"+soname)
	}
}

// libStem is a library file name up to ".so" ("libcuda.so.1" → "libcuda.so").
func libStem(base string) string {
	if i := strings.Index(base, ".so"); i >= 0 {
		return base[:i+3]
	}
	return base
}

// add plans an extra link, which keeps what the image has at p.
func (lp *linkPlan) add(p, target string) {
	lp.link(Symlink{Path: p, Target: target})
}

func (lp *linkPlan) link(s Symlink) {
	if _, ok := lp.index[s.Path]; ok || lp.taken[s.Path] {
		return
	}
	lp.index[s.Path] = len(lp.links)
	lp.links = append(lp.links, s)
}

// soname adds or retargets a SONAME link to the newest library; it
// replaces a symlink the image has there, as ldconfig would.
func (lp *linkPlan) soname(p, base string) {
	v := libVersion(base)
	if i, ok := lp.index[p]; ok {
		if _, known := lp.version[p]; known && slices.Compare(v, lp.version[p]) > 0 {
			lp.links[i].Target = base
			lp.version[p] = v
		}
		return
	}
	lp.link(Symlink{Path: p, Target: base, Replace: true})
	lp.version[p] = v
}
