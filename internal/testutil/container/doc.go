// Package container starts real, minimal containers for tests: a child
// process in new mount and PID namespaces whose root filesystem is a temp
// dir, alive until the test ends.
//
// By default the container is left as an OCI runtime leaves it when its
// hooks run: its mount namespace is a private copy of the host's, the rootfs
// is bind-mounted onto itself at its host path, and pivot_root has not
// happened yet, so host paths still resolve inside the namespace. With
// [Options].PivotRoot the rootfs becomes the container's root, as after the
// runtime started the workload.
//
// The helpers gate on root (testutil.RequireRoot) and on /bin/busybox
// (a static build, copied into the rootfs when pivoting). [SnapshotTree]
// and DiffSnapshots let a test prove that nothing outside a rootfs changed.
package container
