// Package ns runs a function inside another process's mount namespace
// without letting that namespace leak into the rest of the program.
//
// [Namespace.Run] starts a goroutine, locks it to its OS thread, gives the
// thread its own filesystem context (unshare(CLONE_FS): root, working
// directory and umask), joins the target mount namespace with setns and calls
// the function there. The goroutine never unlocks the thread, so when it
// returns the Go runtime terminates the thread instead of reusing it: no other
// goroutine ever runs in the container's namespace, and threads the runtime
// creates meanwhile are cloned from its template thread, not from the
// confined one.
//
// The main thread is guarded. If the confining goroutine finds itself on the
// process leader's thread, it keeps that thread locked (so nothing else can
// run there) and does the work in a fresh goroutine, which then necessarily
// runs on another thread. Without this, the leader could end in the
// container's namespace and /proc/self/ns/mnt and /proc/self/mountinfo would
// describe the container for the rest of the process's life.
//
// [Current] gives a Namespace that does no setns: the function still runs on
// a confined thread with its own filesystem context, which is what a runtime
// needs when it prepares a rootfs before starting the container's process.
//
// Inside the function, use file descriptors, not paths: after setns the
// thread's root and working directory are the container namespace's, and
// /proc there may be the container's own. Goroutines the function starts run
// on other threads, in the caller's namespace.
//
// Because Run makes the runtime discard threads, a child process started
// with exec.Cmd's SysProcAttr.Pdeathsig may be killed when the thread that
// started it happens to be one Run later confines: the parent-death signal
// follows the thread, not the process. Start such children from a goroutine
// that stays locked to its thread for the child's lifetime.
//
// Needs: Linux, CAP_SYS_ADMIN and CAP_SYS_CHROOT for setns into a mount
// namespace (root). [Current] needs no privilege.
package ns
