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
//
// # What it changes
//
// It starts processes (killed and reaped when the test ends) in new mount
// and PID namespaces, bind-mounts the rootfs onto itself and, with
// MountProc, mounts a procfs there — all inside the new mount namespace,
// so the host's mount table is untouched. It writes only in the rootfs.
//
// # When not to use it
//
// It is not an OCI runtime: no cgroups, no user, network or IPC namespace,
// no seccomp or capabilities dropped. Tests that need a runtime's real
// behaviour (hooks, cgroup rules, CDI) run runc, crun or podman in e2e.
package container
