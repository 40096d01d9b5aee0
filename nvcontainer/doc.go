// Package nvcontainer turns what a container asks for into what it gets:
// it plans the driver files and devices a container receives ([NewPlan])
// and applies the plan inside the container's mount namespace
// ([Plan.Apply]). It is the spine of the library; the jobs around it have
// packages of their own.
//
// # The flow
//
// A runtime, hook or device plugin needs these calls, in this order:
//
//	req, err := request.FromSpec(spec, nil)                       // what the container asks for (NVIDIA_* env, mounts)
//	host, _, err := nvcontainer.PrepareHostFor(ctx, nil, req)     // driver files + GPUs: procfs, NVML only if req needs it
//	ctr := nvcontainer.Container{PID: pid, Rootfs: rootfs}        // where it goes
//	plan, err := nvcontainer.NewPlan(host, req, ctr, nil)         // pure: every change, nothing done yet
//	err = plan.Apply(ctx, ctr, nil)                               // root: all or nothing
//
// or, for CDI, cdispec.FromPlan(plan, nil) on a plan made without a
// rootfs. [OpenHost] opens a host for any number of requests (its default
// backend tries NVML first, as nvidia-container-cli info does);
// [PrepareHost] also loads the kernel modules and creates the host's
// device nodes (nvidia-container-cli --load-kmods), and PrepareHostFor
// does so when HostOptions.LoadModules asks.
//
// The packages around the spine, each importable on its own and cgo-free:
//
//   - nvcontainer/request: a [request.Request] from an environment, an OCI
//     spec or a hook's state, with NVIDIA's runtime hook's rules;
//   - nvcontainer/requirement: the NVIDIA_REQUIRE_* language;
//   - nvcontainer/cdispec: CDI specs from a plan or a host;
//   - nvcontainer/cdihook: the createContainer hook actions CDI specs run;
//   - nvcontainer/toolkit: the NVIDIA Container Toolkit's glue (config.toml,
//     the runtime hook's decisions and command line, runc's argv);
//   - nvcontainer/nvcli: the nvidia-container-cli contract (flags, info
//     and list layouts, error prefixes);
//   - nvcontainer/nvctest: simulated hosts for tests.
//
// request and requirement sit below this package (NewPlan takes a request
// and checks its requirements); the others build on it.
//
// # Plans
//
// [NewPlan] turns a request into a [Plan] for one container: the host
// ([Host]: driver.Open and devices.Discover), the request and the
// container's rootfs in, every change out — tmpfs mounts, bind mounts with
// their flags, symlinks, device cgroup rules, the loader cache dirs and the
// CUDA forward-compatibility decision — following nvidia-container-cli
// configure. Device selection, MIG config/monitor and requirements are
// decided first; a refusal is a [*PlanError] whose text is the CLI's own
// ("requirement error: unsatisfied condition: …"). The rootfs is only read,
// through in-root resolution. A plan made without a rootfs keeps host paths
// and is what cdispec.FromPlan writes as a CDI spec.
//
// # The plan as JSON
//
// [Plan.JSON] prints a plan and [ParsePlan] reads it back. Layout version 1
// ([PlanVersion]) is one object (fields marked ? are left out when empty):
//
//	version       1
//	container     {pid, rootfs, mode?} (mode: "rootfs-only" or "standalone", see Mode)
//	driver        {root, version, cudaVersion?}
//	capabilities  "compat32,compute,…" (requested, canonical order)
//	layout        {debian, libDir, lib32Dir, binDir, hostPaths?}
//	gpus          [{index, minor, uuid, busId, migEnabled?}]
//	migDevices?   [{index, parent, gi, ci, uuid?}]
//	requirements? ["cuda>=12.4 brand=tesla", …] (all hold)
//	tmpfs         [{target, mode, options, files: [{name, mode, content}], mounts?: [MOUNT]}]
//	mounts        [MOUNT] (in the order they are applied)
//	symlinks?     [{path, target, replace?, for?}] (replace: a SONAME link, see Symlink; for: as a mount's)
//	cgroupRules?  [{type: "c", major, minor, access: "rw"}]
//	ldcache       {firstDirs?, dirs}
//	cudaCompat    {mode, dir?, libraries?, used, reason?}
//	warnings?     ["missing library libvdpau_nvidia.so", …]
//
//	MOUNT = {kind, source, target, options, dir?, device?: {major, minor}, imagePath?, for?}
//
// kind is one of the MountKind values and decides options (ro, nosuid,
// nodev, noexec, in that order); for names the devices a mount is for ("0",
// "1:0", or "1:0,1:1" for a node two MIG devices share). Modes are decimal numbers (365 is 0555). target, path, dirs and
// libraries are paths inside the rootfs; source is a host path (inside the
// rootfs only for cuda-compat mounts, whose imagePath is the path Apply
// opens, inside the rootfs). Within a version fields are only added; a
// field that changes meaning or goes away bumps PlanVersion.
// testdata/plan-dgxa100.json is a complete example, pinned by a golden test.
//
// # Tegra (CSV mode)
//
// A Jetson host has no procfs driver and no NVML: the NVIDIA Container
// Toolkit's CSV mode gives a container what the mount specs in
// /etc/nvidia-container-runtime/host-files-for-container.d name (package
// tegra). [OpenCSVHost] reads and resolves them, [NewCSVPlan] makes an
// ordinary [Plan] of them (directory mounts of kind "directory", library
// mounts, device nodes with their cgroup rules, the links of sym entries,
// the loader cache dirs), which Apply, the CDI writer and a dry run take
// like any other plan.
//
// # CDI
//
// Package cdispec (github.com/go-nvc/nvc/nvcontainer/cdispec) writes a
// plan made without a rootfs, or every device of a host, as a CDI spec.
//
// # What it needs
//
// Planning is pure: no privileges, no namespaces; it reads the host's
// driver files and the rootfs only through in-root resolution, and never
// reads the process environment itself: environments are parameters. The
// library does not log; facts a hook would log are returned as values
// ([request.Request.Notes], [Plan] warnings).
//
// Applying a plan ([Plan.Apply]) is the only part that acts: it is
// Linux-only and needs root, enters the container's mount namespace on a
// confined thread, mounts through the new mount API (with a bind-by-path
// fallback before Linux 5.12), bind-mounts device nodes, edits device cgroups
// and writes the container's ld.so.cache, undoing everything if a step
// fails. It never runs a binary from the container.
//
// # How Apply works
//
// Plan.Apply runs these steps, in order (see the Step constants):
//
//  1. check: the plan is validated; nothing is touched.
//  2. open: in the caller's (host) mount namespace every host source is
//     opened without following symlinks and checked: a library, binary,
//     firmware or config source must be a regular file, a directory
//     source a directory, a device source a character device with the
//     plan's major:minor. With the new mount API each is cloned into a detached
//     mount whose flags are set before anyone can see it (one
//     open_tree_attr; open_tree and mount_setattr before Linux 6.15), and each tmpfs is created (fsopen, fsmount) and filled —
//     files and placeholders for the mounts inside it — while detached.
//     The container's process is pinned and checked first (see Plan.Apply),
//     then its mount namespace and device cgroup are opened. The
//     sources (on up to GOMAXPROCS goroutines), the tmpfs mounts and the
//     cgroup are opened concurrently; nothing here changes anything.
//  3. cgroup: the device rules are added (v1 devices.allow, or a rebuilt
//     v2 device program that keeps the existing rules); left out when the
//     caller is in a user namespace (see "User namespaces and rootless
//     runtimes").
//  4. enter: on a new OS thread, locked and never unlocked so the Go
//     runtime discards it, Apply unshares the filesystem context, joins
//     the container's mount namespace, takes Owner as the thread's
//     filesystem uid and gid and opens the rootfs. No other
//     goroutine ever runs in that namespace. In CUDA compat mount mode,
//     the image's compat libraries (Mount.ImagePath) are opened here,
//     through the rootfs with in-root resolution, checked to be regular
//     files and cloned (open_tree on the descriptor): never by a host
//     path an image symlink could redirect. The thread is started, and
//     joins the namespace, while step 2 runs; it waits there, changing
//     nothing, until step 3 is done (and leaves if Apply fails before).
//  5. tmpfs: each tmpfs is mounted, then the mounts inside it (the selected
//     GPUs' /proc/driver/nvidia/gpus/<bus id>) are attached through its own
//     descriptor.
//  6. mount: each target is resolved inside the rootfs (openat2
//     RESOLVE_IN_ROOT, or filepath-securejoin's pathrs-lite before Linux
//     5.6); missing parents and an empty placeholder of the source's type
//     are created with *at calls relative to verified directory
//     descriptors, owned by Owner; then the source is moved onto the
//     placeholder's descriptor (move_mount). A target directory is
//     resolved once and its descriptor reused for the later targets in it
//     (all the libraries go into one or two directories), until a
//     directory or tmpfs is mounted, which may hide it. A symlink, FIFO,
//     socket or directory where a file should be is an error
//     (ErrWrongType), never followed. An existing device node with the
//     right number is mounted over as is.
//  7. symlink: each link is created with symlinkat; an existing link with
//     the same target is kept. A SONAME link (Symlink.Replace) replaces a
//     symlink the image has there (a stale libcuda.so.1 from a committed
//     GPU container), atomically and never following it, as ldconfig
//     would re-point it; a file or directory there is an error. An extra
//     link (libcuda.so, libGLX_indirect.so.0, …) keeps whatever the image
//     has there (Mesa's libGLX_indirect.so.0), as libnvidia-container
//     does; the plan cannot know, so this is not reported.
//  8. ldcache: the rootfs's ld.so.cache is rebuilt in Go (package ldcache)
//     with the plan's FirstDirs, then Dirs, before the rootfs's own
//     configuration, and swapped in by rename in /etc, owned by Owner; a
//     symlink at the cache path is replaced, never followed. The scanned
//     directories are only read: no SONAME link is made in them (the plan's
//     symlinks are; an image's CUDA compat dir ships its own, as NVIDIA's
//     cuda-compat packages do). On a musl rootfs the path file
//     /etc/ld-musl-<arch>.path is updated instead (atomically, and last,
//     so never taken back). Nothing from the container is executed.
//  9. commit: a last look at ctx; from here the changes are kept.
//
// Apply creates nothing in the runtime's volumes (host directories
// mounted into the rootfs) and mounts nothing on a mount with shared
// propagation: see ErrVolume and ErrSharedMount for the rules.
//
// While it runs, Apply holds about one file descriptor per mount (its
// detached mount, which becomes the attached one, kept to take it back;
// with LegacyMounts also the source file until it is attached) and one per
// directory it creates or fills; many concurrent calls on large plans need
// RLIMIT_NOFILE to match.
//
// Apply needs root: CAP_SYS_ADMIN and CAP_SYS_CHROOT to join the namespace
// and mount, CAP_DAC_OVERRIDE and CAP_CHOWN to create files for another
// owner, and, for cgroup v2 rules, bpf(2). It needs Linux 5.12 for the new
// mount API; before that it binds by path inside the namespace and
// remounts (the LegacyMounts method), which works only before pivot_root.
// Targets are resolved with openat2 (Linux 5.6) or pathrs-lite. The library
// does not log; Apply returns nil or an *ApplyError.
//
// # Interrupted runs, retries and shared rootfs
//
// A process killed part-way through [Plan.Apply] (SIGKILL, an OOM kill, a
// hook timeout) runs no undo. What it can leave is bounded to the container:
// mounts in the container's mount namespace; placeholders, parent
// directories and links in its rootfs; the loader cache it swapped in, with
// the previous one under a hidden ".ld.so.cache.nvc-XXXXXXXXXXXX" name; device
// cgroup rules on the container's own cgroup. Never anything on the host:
// nothing is mounted or written outside the container.
//
// Running Apply again with the same plan converges to what one clean run
// gives: a target that already shows its source as Apply would mount it (the
// same file, st_dev and st_ino of the opened source, on a mount with the
// same ro, nosuid, nodev and noexec flags) is left as it is instead of
// stacking a second mount; a tmpfs that looks like the plan's (a tmpfs
// mounted right at the target, with its mode and flags) is detached with
// the mounts inside it before the new one is attached (not taken back if
// the retry fails); stale ".NAME.nvc-" temporaries (regular files and links
// with exactly that pattern) are removed from the directories Apply writes
// in; existing placeholders and links are reused; cgroup rules already
// granted are not added again. Entries are created with their final mode
// (the confined thread has no umask) and their owner (its filesystem ids
// are Owner's), so a kill leaves no entry owned by the caller.
//
// Applies on the same rootfs directory (two containers started from one
// rootfs, a retry racing a run still going) are serialized by an exclusive
// flock on that directory, waited for while ctx allows and held until the
// changes are kept or taken back: a placeholder one Apply created and
// mounted is pre-existing for the next, which never records it, so its
// undo never unlinks it (an unlink of a mountpoint detaches the mount in
// every other namespace too). If Apply fails, what it could not take back
// (a directory someone filled meanwhile, an entry replaced since) is named
// in [ApplyError].UndoErr.
//
// # User namespaces and rootless runtimes
//
// A container with a user namespace (runc or crun with uid and gid
// mappings, podman with --userns or rootless) sees the host's root as
// the overflow id (65534), and a filesystem mounted inside its namespace
// (the runtime's tmpfs /dev) cannot hold an inode owned by an id its
// namespace does not map: the kernel refuses to create one (EOVERFLOW).
// So everything Apply creates in the rootfs — parent directories,
// placeholders, symlinks, the loader cache — is created, not chowned
// afterwards, as Owner (by default the owner of /proc/PID, the
// container's root as the host sees it): the confined thread sets its
// filesystem uid and gid to Owner's (setfsuid, setfsgid, as
// libnvidia-container does) and puts back the effective capabilities
// that change clears. The /proc/driver/nvidia tmpfs, built on the host
// side, and every entry in it are given to Owner. Under a runtime run by
// root, the host's 100000 owns what a container whose root maps to 100000
// gets; inside, it is the container's root.
//
// A caller in a user namespace other than the initial one (the hook of a
// rootless runtime: its /proc/self/uid_map or gid_map is not the
// identity) cannot change a device cgroup: the kernel requires
// CAP_SYS_ADMIN (or CAP_BPF) in the initial namespace for devices.allow
// and for device programs, and the rootless runtime could not set a
// device policy either. Apply then leaves the plan's cgroup rules out
// and the runtime's policy (or the nodes' permissions alone) decides,
// instead of failing as libnvidia-container does without --no-cgroups;
// [Plan.DeviceRulesLeftToRuntime] tells a caller so (the CLI and the
// hook log it). Nothing else needs more than root in the caller's user namespace with
// CAP_SYS_ADMIN over the container's mount namespace, which a rootless
// runtime's hook has.
//
// # When not to use it
//
// If a runtime already speaks CDI and has a spec for the host, it does not
// need a Request: it resolves CDI device names directly. The runtime hook's
// mode detection (legacy versus cdi versus jit-cdi) and CDI annotations are
// not part of a Request; a CDI name given as a volume mount is kept as a
// device ID string.
package nvcontainer
