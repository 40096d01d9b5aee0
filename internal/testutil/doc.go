// Package testutil holds helpers shared by the tests of every package: the
// gate for tests that need root or a kernel feature, tree fixtures, and
// rootfs fixtures that let a real dynamic loader run in a test rootfs.
//
// The gate has one rule. Where a test cannot run (not root, a command or a
// kernel feature missing) it is skipped with the reason — unless the
// environment sets NVC_REQUIRE_PRIVILEGED=1, as CI does, in which case the
// same condition fails the test. A privileged test therefore never passes in
// CI by skipping. Privileged tests call [RequireRoot], [RequireCommand],
// [RequireKernel] or [Unavailable]; never t.Skip directly.
//
// Tree fixtures ([Tree], [RootTree], [BuildTree]) build an internal/fstree
// description in a temp dir. Rootfs fixtures copy host files
// ([CopyHostFile]), the host's loader and libc ([AddHostLibc]) and add a
// program that runs only if the loader finds libcuda.so.1
// ([AddCUDAProgram]).
//
// # What it needs
//
// Helpers write only in the test's temp dirs and read the host files they
// copy. Real device nodes ([RootTree]) need root. Every helper calls
// t.Helper and cleans up through the test's own TempDir.
//
// # When not to use it
//
// It is for tests only: it imports package testing and must never be
// imported by library code or the examples (internal/fakehost, which the
// examples use, is separate for that reason).
package testutil
