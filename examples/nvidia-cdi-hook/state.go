package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Size limits: far above real documents.
const (
	maxStateSize = 1 << 20
	maxSpecSize  = 16 << 20
)

// state is the part of the OCI state a hook needs.
type state struct {
	Bundle     string `json:"bundle"`
	BundlePath string `json:"bundlePath"` // runc before 17.06
	Root       string `json:"root"`       // crun's extra field
}

// containerRoot returns the container's root filesystem for the OCI state
// read from r: crun's "root" field, or else root.path of the bundle's
// config.json, joined to the bundle when relative. An empty root or "/"
// is refused: the hook must never rewrite the host's own files.
func containerRoot(r io.Reader) (string, error) {
	var st state
	if err := readJSON(r, maxStateSize, &st); err != nil {
		return "", fmt.Errorf("reading OCI state: %w", err)
	}
	bundle := st.Bundle
	if bundle == "" {
		bundle = st.BundlePath
	}
	root := st.Root
	if root == "" {
		var err error
		if root, err = specRoot(bundle); err != nil {
			return "", err
		}
	}
	if !filepath.IsAbs(root) {
		root = filepath.Join(bundle, root)
	}
	root = filepath.Clean(root)
	if root == "/" || !filepath.IsAbs(root) {
		return "", fmt.Errorf("finding the container root of bundle %q: refusing root %q", bundle, root)
	}
	return root, nil
}

// specRoot reads root.path from <bundle>/config.json.
func specRoot(bundle string) (string, error) {
	if bundle == "" {
		return "", errors.New("reading OCI state: no \"root\" and no \"bundle\"")
	}
	name := filepath.Join(bundle, "config.json")
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("loading OCI spec: %w", err)
	}
	defer f.Close()
	var spec struct {
		Root *struct {
			Path string `json:"path"`
		} `json:"root"`
	}
	if err := readJSON(f, maxSpecSize, &spec); err != nil {
		return "", fmt.Errorf("loading OCI spec %s: %w", name, err)
	}
	if spec.Root == nil || spec.Root.Path == "" {
		return "", fmt.Errorf("loading OCI spec %s: no root.path", name)
	}
	return spec.Root.Path, nil
}

func readJSON(r io.Reader, limit int64, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("more than %d bytes", limit)
	}
	return json.Unmarshal(data, v)
}
