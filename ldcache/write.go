package ldcache

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile encodes c (see MarshalBinary) and replaces the file at path
// atomically: it writes a temporary file in the same directory, syncs it,
// sets mode 0644 and renames it over path, so a reader sees the old cache
// or the new one, never a mix. A symlink at path is replaced, not
// followed. To write inside an untrusted root, use Update.
func WriteFile(path string, c *Cache) error {
	b, err := c.MarshalBinary()
	if err != nil {
		return fmt.Errorf("writing ld.so.cache %s: %w", path, err)
	}
	if err := writeAtomic(path, b); err != nil {
		return fmt.Errorf("writing ld.so.cache %s: %w", path, err)
	}
	return nil
}

func writeAtomic(path string, b []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(b); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
