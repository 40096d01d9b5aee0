//go:build !linux

package ldcache

import (
	"context"
	"fmt"
	"io"
)

// Build needs Linux (openat2 and friends); elsewhere it fails.
func Build(ctx context.Context, rootPath string, opts *BuildOptions) (*Cache, error) {
	return nil, fmt.Errorf("building ld.so.cache for %s: %w", rootPath, ErrNotSupported)
}

// Update needs Linux; elsewhere it fails.
func Update(ctx context.Context, rootfs string, opts *UpdateOptions) error {
	return fmt.Errorf("updating ld.so.cache in %s: %w", rootfs, ErrNotSupported)
}

// DetectFamily needs Linux; elsewhere it fails.
func DetectFamily(rootfs, goarch string) (Family, error) {
	return 0, fmt.Errorf("detecting the system of %s: %w", rootfs, ErrNotSupported)
}

// OpenInRoot needs Linux; elsewhere it fails.
func OpenInRoot(rootfs, unsafePath string) (*Cache, error) {
	return nil, fmt.Errorf("reading ld.so.cache %s in %s: %w", unsafePath, rootfs, ErrNotSupported)
}

// WriteFileInRoot needs Linux; elsewhere it fails.
func WriteFileInRoot(rootfs, unsafePath string, c *Cache) error {
	return fmt.Errorf("writing ld.so.cache %s in %s: %w", unsafePath, rootfs, ErrNotSupported)
}

// MuslPathFile needs Linux; elsewhere it fails.
func MuslPathFile(rootfs, goarch string, dirs []string) (string, []byte, error) {
	return "", nil, fmt.Errorf("reading the musl path file of %s: %w", rootfs, ErrNotSupported)
}

// ReadLibrary needs Linux; elsewhere it fails.
func ReadLibrary(r io.ReaderAt, id FileID, goarch string) (Library, error) {
	return Library{}, fmt.Errorf("reading a library: %w", ErrNotSupported)
}
