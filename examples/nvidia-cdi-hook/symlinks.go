//go:build !cgo

package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

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
			if err := symlink(root, p.target, p.link); err != nil {
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

// symlink makes link (a path in root) a symlink to target. A missing link
// is created (parents 0755); the same link already there is left alone;
// a different symlink or a file there is replaced atomically: the new link
// is made under a temporary name in the same directory, pinned by its
// descriptor, and renamed over the old one. A directory is an error.
func symlink(root *rootfs.Root, target, link string) error {
	e, err := root.Symlink(target, link)
	if err == nil {
		return e.Close()
	}
	if !errors.Is(err, fs.ErrExist) && !errors.Is(err, rootfs.ErrWrongType) {
		return err
	}
	old, lerr := root.Lookup(link)
	if lerr != nil {
		return lerr
	}
	defer old.Close()
	if old.Mode().IsDir() {
		return err
	}
	if err := replaceLink(old, target); err != nil {
		return fmt.Errorf("replacing %q with a symlink to %q in rootfs %q: %w", link, target, root.Path(), err)
	}
	return nil
}

func replaceLink(old *rootfs.Entry, target string) error {
	dir := int(old.Dir().Fd())
	tmp := "." + old.Name() + ".nvc-" + randomSuffix()
	if err := unix.Symlinkat(target, dir, tmp); err != nil {
		return fmt.Errorf("symlinkat %s: %w", tmp, err)
	}
	if err := unix.Renameat(dir, tmp, dir, old.Name()); err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return fmt.Errorf("renameat %s over %s: %w", tmp, old.Name(), err)
	}
	return nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
