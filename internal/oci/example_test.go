package oci_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/go-nvc/nvc/internal/oci"
)

// A createContainer hook under crun: the state names the root itself, so
// the bundle's config.json is not read.
func ExampleLoadRootfs() {
	stdin := strings.NewReader(`{"ociVersion":"1.0.0","id":"c1","status":"creating","pid":0,` +
		`"bundle":"/run/containers/c1","root":"/var/lib/containers/c1/merged"}`)
	st, err := oci.ReadState(stdin)
	if err != nil {
		log.Fatal(err)
	}
	rootfs, err := oci.LoadRootfs(st)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rootfs)
	// Output: /var/lib/containers/c1/merged
}
