package cdihook_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/go-nvc/nvc/ldcache"
	"github.com/go-nvc/nvc/nvcontainer/cdihook"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// A createContainer hook's work, in the order generated specs run it, on
// a simulated host's tree standing in for a container whose driver
// libraries the CDI spec mounted: the root comes from the OCI state on
// the hook's stdin (crun's, which names it), then the links, the CUDA
// compat rule (the image has no compat library) and the loader cache.
// It writes into the tree; run as root.
func Example() {
	sim, err := nvctest.GenerateTemp(nvctest.DGXA100, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sim.Remove()
	ctx := context.Background()
	state := strings.NewReader(`{"ociVersion":"1.0.2","id":"c1","status":"creating","pid":4242,"bundle":"/run/c1","root":"` + sim.Roots.Driver + `"}`)

	rootfs, err := cdihook.ContainerRoot(ctx, state)
	if err != nil {
		log.Fatal(err)
	}
	links, err := cdihook.ParseLinks([]string{"libcuda.so.1::" + sim.LibDir + "/libcuda.so"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := cdihook.CreateSymlinks(ctx, rootfs, &cdihook.SymlinksOptions{Links: links}); err != nil {
		log.Fatal(err)
	}
	compat, err := cdihook.EnableCUDACompat(ctx, rootfs, &cdihook.CUDACompatOptions{HostDriverVersion: sim.DriverVersion})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("compat:", compat.Enabled, compat.Reason)
	if _, err := cdihook.UpdateLDCache(ctx, rootfs, &cdihook.LDCacheOptions{Folders: []string{sim.LibDir}}); err != nil {
		log.Fatal(err)
	}
	cache, err := ldcache.OpenInRoot(rootfs, "/etc/ld.so.cache")
	if err != nil {
		log.Fatal(err)
	}
	// The loader takes the first entry; the libraries of a previous
	// driver install, which the tree's ld.so.conf.d names, come after.
	first := cache.Find("libcuda.so.1", ldcache.ArchX8664)[0]
	fmt.Println(first.Name, "=>", first.Path)
	// Output:
	// compat: false want exactly one libcuda.so.*.* in /usr/local/cuda/compat, found 0
	// libcuda.so.1 => /usr/lib/x86_64-linux-gnu/libcuda.so.1
}

// DisableDeviceNodeModification mounts over the container's params in
// the calling thread's mount namespace: a createContainer hook calls it
// there, with the host's /proc still visible. It needs CAP_SYS_ADMIN, so
// the example only compiles.
func ExampleDisableDeviceNodeModification() {
	ctx := context.Background()
	res, err := cdihook.DisableDeviceNodeModification(ctx, "/run/containers/c1/rootfs", &cdihook.DeviceNodeOptions{ProcRoot: "/proc"})
	switch {
	case err != nil:
		log.Fatal(err)
	case res.Skipped == cdihook.SkippedNoContainerParams || res.Skipped == cdihook.SkippedNoMountAPI:
		log.Print("warning: ", res.Skipped)
	}
	fmt.Println("masked:", res.Masked)
}
