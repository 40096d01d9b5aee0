package ldcache_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-nvc/nvc/ldcache"
)

// A done context stops Build and Update before they scan: Build returns
// its error, Update leaves the cache as it was.
func TestBuildUpdateContext(t *testing.T) {
	root := debianRoot(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c, err := ldcache.Build(ctx, root, &ldcache.BuildOptions{NoLinks: true})
	assert.ErrorIs(t, err, context.Canceled, "Build with a cancelled context")
	assert.Nil(t, c, "Build with a cancelled context")
	cache := filepath.Join(root, "etc/ld.so.cache")
	before, _ := os.ReadFile(cache)
	assert.ErrorIs(t, ldcache.Update(ctx, root, nil), context.Canceled, "Update with a cancelled context")
	after, _ := os.ReadFile(cache)
	assert.Equal(t, string(before), string(after), "Update with a cancelled context changed the cache")
	_, err = ldcache.Build(t.Context(), root, &ldcache.BuildOptions{NoLinks: true})
	assert.NoError(t, err, "Build with a live context")
}
