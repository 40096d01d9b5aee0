//go:build !cgo

package main

// builtWithCgo is false in a CGO_ENABLED=0 build: a static binary, which
// no dynamic loader (and so no LD_PRELOAD) ever runs in.
const builtWithCgo = false
