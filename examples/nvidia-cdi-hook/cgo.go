//go:build cgo

package main

// builtWithCgo is true in a build with cgo enabled, whose binary may be
// dynamically linked: main then refuses to run (see cgoRefusal). The
// refusal is at run time, not a compile error, so that `go build ./...`
// and `go vet ./...` still work with the default CGO_ENABLED=1.
const builtWithCgo = true
