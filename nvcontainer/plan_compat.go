package nvcontainer

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// cudaCompatDir is where CUDA images keep their forward-compatibility
// libraries (libnvidia-container's compat handling).
const cudaCompatDir = "/usr/local/cuda/compat"

// compatMode is the mode the plan uses; request.CompatDefault means request.CompatLdconfig
// (see NewPlan).
func (pl *planner) compatMode() request.CUDACompatMode {
	if m := pl.req.CUDACompatMode; m != request.CompatDefault {
		return m
	}
	return request.CompatLdconfig
}

// checkCompatMode refuses a mode nvidia-container-cli does not know.
func checkCompatMode(m request.CUDACompatMode) error {
	switch m {
	case request.CompatDefault, request.CompatMount, request.CompatLdconfig, request.CompatDisabled:
		return nil
	}
	return fmt.Errorf("unknown CUDA compat mode %q (want mount, ldconfig or disabled)", string(m))
}

// decideCompat looks at the image's compat libraries, resolved inside the
// rootfs, and decides what the plan does with them: in ldconfig mode the
// directory of those newer than the driver goes first in the loader cache;
// in mount mode those whose major differs from the driver's are mounted
// into LibDir; in disabled mode nothing is looked at.
func (pl *planner) decideCompat(v rootfsView) error {
	c := &pl.p.CUDACompat
	c.Mode = pl.compatMode()
	switch {
	case c.Mode == request.CompatDisabled:
		c.Reason = "disabled"
		return nil
	case !pl.exp.Has(capabilities.Compute):
		c.Reason = "no compute capability"
		return nil
	}
	dir, ok, err := resolveDir(v, cudaCompatDir)
	if err != nil || !ok {
		c.Reason = "no " + cudaCompatDir + " in the rootfs"
		return err
	}
	c.Dir = dir
	if c.Libraries, err = compatLibraries(v, dir); err != nil {
		return err
	}
	return pl.filterCompat(c)
}

// compatLibraries returns the files lib*.so.* in dir lead to, resolved
// inside the rootfs, regular files only, deduplicated and sorted.
func compatLibraries(v rootfsView, dir string) ([]string, error) {
	names, err := v.list(dir)
	if err != nil {
		return nil, err
	}
	var libs []string
	for _, n := range names {
		if !strings.HasPrefix(n, "lib") || !strings.Contains(n[3:], ".so.") {
			continue
		}
		p, mode, err := v.resolve(path.Join(dir, n))
		if absent(err) || (err == nil && !isRegMode(mode)) {
			continue
		}
		if err != nil {
			return nil, err
		}
		libs = append(libs, p)
	}
	slices.Sort(libs)
	return slices.Compact(libs), nil
}

// filterCompat keeps the libraries the mode uses and records the outcome.
func (pl *planner) filterCompat(c *CUDACompat) error {
	rm, _ := libMajor("x.so." + pl.p.Driver.Version)
	var kept []string
	for _, l := range c.Libraries {
		maj, ok := libMajor(path.Base(l))
		if ok && (maj > rm || (c.Mode == request.CompatMount && maj != rm)) {
			kept = append(kept, l)
		}
	}
	if len(kept) == 0 {
		c.Reason = fmt.Sprintf("no compat library to use with driver %s", pl.p.Driver.Version)
		return nil
	}
	c.Used = true
	c.Reason = fmt.Sprintf("used with driver %s: %s", pl.p.Driver.Version, strings.Join(bases(kept), ", "))
	if c.Mode == request.CompatMount {
		pl.compatMounts = kept
		return nil
	}
	return pl.compatFirstDir(kept)
}

// compatFirstDir puts the one directory holding kept first in the loader
// cache; libraries spread over several directories are refused, as
// nvidia-container-cli refuses them.
func (pl *planner) compatFirstDir(kept []string) error {
	dir := path.Dir(kept[0])
	for _, l := range kept[1:] {
		if path.Dir(l) != dir {
			return fmt.Errorf("deciding CUDA compat in rootfs %q: compat libraries in more than one directory (%q, %q)",
				pl.ctr.Rootfs, dir, path.Dir(l))
		}
	}
	pl.p.LDCache.FirstDirs = []string{dir}
	return nil
}

// libMajor returns the number that starts the version of a library file
// name ("libcuda.so.570.86.10" → 570).
func libMajor(base string) (int, bool) {
	v := libVersion(base)
	if len(v) == 0 {
		return 0, false
	}
	return v[0], true
}

// libVersion returns the dot-separated numbers after ".so." up to the first
// component that is not a number ("libcuda.so.570.86.10" → [570 86 10]).
func libVersion(base string) []int {
	_, rest, ok := strings.Cut(base, ".so.")
	if !ok {
		return nil
	}
	var v []int
	for c := range strings.SplitSeq(rest, ".") {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 || strings.HasPrefix(c, "+") {
			break
		}
		v = append(v, n)
	}
	return v
}

func bases(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = path.Base(p)
	}
	return out
}
