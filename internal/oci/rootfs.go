package oci

import (
	"fmt"
	"path"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/internal/sentinel"
)

// ErrInvalidRootfs is matched when no usable root filesystem can be found:
// neither the state nor the spec names one, or it is "/".
var ErrInvalidRootfs = sentinel.ErrInvalidRootfs

// Rootfs returns the container's root filesystem: the state's Root (crun's
// field) when set, else spec's root.path; a relative path is joined to the
// bundle directory, and the result is cleaned. spec may be nil when
// st.Root is set. A missing root, or one that is "/" or not absolute once
// joined, is an error matching [ErrInvalidRootfs].
func Rootfs(st *State, spec *specs.Spec) (string, error) {
	root := st.Root
	if root == "" && spec != nil && spec.Root != nil {
		root = spec.Root.Path
	}
	if root == "" {
		return "", fmt.Errorf("finding the rootfs of bundle %q: no \"root\" in the state and no root.path in the spec: %w",
			st.BundleDir(), ErrInvalidRootfs)
	}
	if !path.IsAbs(root) {
		root = path.Join(st.BundleDir(), root)
	}
	root = path.Clean(root)
	if root == "/" || !path.IsAbs(root) {
		return "", fmt.Errorf("finding the rootfs of bundle %q: refusing root %q: %w", st.BundleDir(), root, ErrInvalidRootfs)
	}
	return root, nil
}

// LoadRootfs is [Rootfs] for a hook that needs nothing else from the
// spec: it loads the bundle's config.json ([LoadSpec]) only when the state
// has no Root.
func LoadRootfs(st *State) (string, error) {
	if st.Root != "" {
		return Rootfs(st, nil)
	}
	spec, err := LoadSpec(st.BundleDir())
	if err != nil {
		return "", err
	}
	return Rootfs(st, spec)
}
