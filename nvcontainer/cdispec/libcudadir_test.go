package cdispec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// TestCDILibCUDADir checks NVIDIA_CTK_LIBCUDA_DIR, the dir of the driver's
// libraries, in the spec's environment as the NVIDIA Container Toolkit
// writes it (the 32-bit dir is not in it), for both library layouts, and
// its absence from a spec without driver libraries.
func TestCDILibCUDADir(t *testing.T) {
	for _, layout := range []nvctest.Layout{nvctest.Debian, nvctest.Fedora} {
		t.Run(map[nvctest.Layout]string{nvctest.Debian: "debian", nvctest.Fedora: "fedora"}[layout], func(t *testing.T) {
			sim := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{Layout: layout})
			h := openTestHost(t, sim, "")
			spec, err := cdispec.FromHost(h.host, capabilities.All, nil)
			require.NoError(t, err)
			assert.Contains(t, spec.ContainerEdits.Env, cdispec.EnvLibCUDADir+"="+sim.LibDir)
		})
	}
	t.Run("no libraries", func(t *testing.T) {
		h := newTestHost(t, nil)
		spec, err := cdispec.FromHost(h.host, capabilities.Of(), nil)
		require.NoError(t, err)
		for _, e := range spec.ContainerEdits.Env {
			assert.NotContains(t, e, cdispec.EnvLibCUDADir)
		}
	})
}
