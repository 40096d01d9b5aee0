//go:build !cgo

package main

import (
	"fmt"
	"path"
	"strings"

	"github.com/spf13/pflag"

	"github.com/go-nvc/nvc/internal/liblink"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// createSymlinksFlags declares create-symlinks' flags and returns its
// action: make each LINK a symlink to TARGET inside the container's root.
func createSymlinksFlags(fs *pflag.FlagSet) action {
	links := fs.StringArray("link", nil, "create `TARGET::LINK`, LINK a path in the container (repeatable)")
	return func(rootfsPath string, h *hookEnv) error {
		pairs, err := parseLinks(*links)
		if err != nil {
			return err
		}
		root, err := rootfs.Open(rootfsPath, nil)
		if err != nil {
			return err
		}
		defer root.Close()
		for _, p := range pairs {
			h.log.Debug("creating symlink", "link", p.link, "target", p.target)
			if err := symlink(root, p.target, p.link, h); err != nil {
				return err
			}
		}
		return nil
	}
}

type linkPair struct{ target, link string }

// parseLinks splits TARGET::LINK arguments, dropping repeated links to the
// same target.
func parseLinks(args []string) ([]linkPair, error) {
	var out []linkPair
	seen := map[linkPair]bool{}
	for _, a := range args {
		target, link, ok := strings.Cut(a, "::")
		if !ok || target == "" || !path.IsAbs(link) || path.Clean(link) == "/" {
			return nil, fmt.Errorf("parsing --link %q: want TARGET::/ABSOLUTE/LINK", a)
		}
		p := linkPair{target, path.Clean(link)}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// symlink makes link (a path in root) a symlink to target with the rule
// Apply shares (package liblink): a SONAME link (libnvidia-ml.so.1 ->
// libnvidia-ml.so.550.54.15, see liblink.IsSONAME) is created, or
// replaces a symlink the image has there, atomically; a regular file or
// directory the image ships there is left alone and is an error naming
// it. Any other link (libcuda.so -> libcuda.so.1) keeps whatever the
// image has at its path, and the log says so.
func symlink(root *rootfs.Root, target, link string, h *hookEnv) error {
	kept, err := liblink.Place(root, target, link, liblink.IsSONAME(link, target))
	if kept != "" {
		h.log.Info("keeping the image's file where a link was asked for", "link", link, "target", target, "found", kept)
	}
	return err
}
