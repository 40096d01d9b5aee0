package ldcache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-nvc/nvc/ldcache"
)

// A done context stops Build and Update before they scan: Build returns
// its error, Update leaves the cache as it was.
func TestBuildUpdateContext(t *testing.T) {
	root := debianRoot(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if c, err := ldcache.Build(ctx, root, &ldcache.BuildOptions{NoLinks: true}); !errors.Is(err, context.Canceled) || c != nil {
		t.Errorf("Build with a cancelled context: %v, %v", c, err)
	}
	cache := filepath.Join(root, "etc/ld.so.cache")
	before, _ := os.ReadFile(cache)
	if err := ldcache.Update(ctx, root, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context: %v", err)
	}
	if after, _ := os.ReadFile(cache); string(after) != string(before) {
		t.Error("Update with a cancelled context changed the cache")
	}
	if _, err := ldcache.Build(t.Context(), root, &ldcache.BuildOptions{NoLinks: true}); err != nil {
		t.Errorf("Build with a live context: %v", err)
	}
}
