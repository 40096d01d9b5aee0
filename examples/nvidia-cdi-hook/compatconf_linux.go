//go:build !cgo

package main

import (
	"fmt"
	"path"
	"regexp"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
)

// compatConfName is the one file in /etc/ld.so.conf.d that
// enable-cuda-compat writes: the same name on every run, so that runs on
// the same writable layer (every `docker start`) replace it rather than
// add another.
const compatConfName = "00-compat-nvidia-cdi-hook.conf"

// generatedCompatConf matches the names earlier hooks gave their entry:
// 00-compat-<12 hex digits>.conf (this hook before it used
// compatConfName) and 00-compat-<uuid>.conf (NVIDIA's nvidia-cdi-hook).
var generatedCompatConf = regexp.MustCompile(`^00-compat-([0-9a-f]{12}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.conf$`)

// isHookCompatConf reports whether name in /etc/ld.so.conf.d is an entry a
// hook wrote: compatConfName or a generated name, listing the compat dir
// and nothing else. Anything else there is the image's and is left alone.
func isHookCompatConf(root *rootfs.Root, name string) bool {
	if name != compatConfName && !generatedCompatConf.MatchString(name) {
		return false
	}
	return slices.Equal(readConfDirs(root, path.Join(ldsoconfDir, name)), []string{compatDir})
}

// convergeCompatConf makes the hook's entries in /etc/ld.so.conf.d what
// one clean run leaves: with use, compatConfName naming the compat dir
// and no other; without, none. Entries of earlier runs (and of NVIDIA's
// hook) are removed, so that a stale one cannot keep an older compat
// libcuda.so.1 first after the host driver was upgraded past it. At most
// maxCompatConfs candidates are looked at per run. It returns the file
// written ("" if none) and the names removed.
func convergeCompatConf(root *rootfs.Root, use bool) (written string, removed []string, err error) {
	if use {
		written = path.Join(ldsoconfDir, compatConfName)
		if err := root.WriteFile(written, []byte(compatDir+"\n"), compatConfPerms); err != nil {
			return "", nil, fmt.Errorf("creating %s: %w", written, err)
		}
	}
	dir, err := openDirInRoot(root, ldsoconfDir)
	if err != nil {
		return written, nil, ignoreMissing(err)
	}
	defer dir.Close()
	var stale []string
	err = eachName(dir, compatConfGlob, func(name string) bool {
		if (name != compatConfName || !use) && (name == compatConfName || generatedCompatConf.MatchString(name)) {
			stale = append(stale, name)
		}
		return len(stale) < maxCompatConfs
	})
	if err != nil {
		return written, nil, err
	}
	for _, name := range stale {
		if !isHookCompatConf(root, name) {
			continue
		}
		if err := unix.Unlinkat(int(dir.Fd()), name, 0); err != nil {
			return written, removed, fmt.Errorf("removing stale %s in rootfs %q: %w", path.Join(ldsoconfDir, name), root.Path(), err)
		}
		removed = append(removed, name)
	}
	return written, removed, nil
}
