package fakehost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-nvc/nvc/internal/fstree"
	"github.com/go-nvc/nvc/ldcache"
)

// writeCache builds the root's ld.so.cache with ldcache (the tree scanned
// as glibc's ldconfig -X -r would for x86-64) and writes it to
// etc/ld.so.cache.
func writeCache(root string) error {
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{GOARCH: "amd64", NoLinks: true})
	if err != nil {
		return fmt.Errorf("building ld.so.cache of %s: %w", root, err)
	}
	if err := ldcache.WriteFileInRoot(root, "/etc/ld.so.cache", c); err != nil {
		return fmt.Errorf("writing ld.so.cache of %s: %w", root, err)
	}
	return nil
}

// makeStale replaces the files of stale, which the cache lists, by stale's
// entries, so the cache holds entries no ldconfig would write now.
func makeStale(root string, stale []fstree.Entry) error {
	for _, e := range stale {
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(e.Path))); err != nil {
			return fmt.Errorf("making the cache stale: %w", err)
		}
	}
	if err := fstree.Build(root, stale, nil); err != nil {
		return fmt.Errorf("making the cache stale: %w", err)
	}
	return nil
}
