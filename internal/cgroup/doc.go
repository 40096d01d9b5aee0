// Package cgroup grants a running container access to device nodes through
// its device cgroup, the mechanism nvcontainer's Apply uses for each node it
// injects. It reads /proc/PID/cgroup and the caller's mountinfo to find the
// cgroup, and changes only that cgroup's device rules.
//
// Both kernel mechanisms are handled:
//
//   - cgroup v1 (the devices controller, also in "hybrid" layouts): Allow
//     reads devices.list, writes a "c MAJOR:MINOR ACCESS" line to devices.allow
//     for each access a rule lacks, and checks devices.list afterwards. Undo
//     writes the same lines to devices.deny, so only what Allow added is taken
//     away. A cgroup in default-allow mode ("a *:* rwm", a privileged
//     container) already allows everything and is left alone.
//   - cgroup v2: device access is decided by BPF_CGROUP_DEVICE programs
//     attached to the cgroup (runc, crun and systemd attach one each). Allow
//     reads every attached program back from the kernel, builds a new one that
//     first accepts the granted devices and then runs the original
//     instructions unchanged, and swaps it in atomically (BPF_F_REPLACE, or a
//     plain re-attach where the cgroup holds a single non-multi program). Undo
//     swaps the original programs back. A cgroup without device programs
//     allows every device; Allow then changes nothing.
//
// A process whose /proc/PID/cgroup has a "devices" line is on v1, even where
// a cgroup2 hierarchy is also mounted (hybrid); otherwise its "0::" line
// places it on v2.
//
// # Requirements
//
// Root (CAP_SYS_ADMIN): v1 needs write access to the cgroup files; v2 needs
// bpf(2) with BPF_PROG_QUERY, BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD
// (translated instructions) and BPF_PROG_LOAD of BPF_PROG_TYPE_CGROUP_DEVICE
// programs, so Linux 4.15 or newer; atomic replacement of a program among
// several needs BPF_F_REPLACE (Linux 5.6). Without it the new program is
// attached before the old one is detached: for that moment both run and
// access is what the old program alone allowed, never more. Before Linux 5.11
// loading a program is charged to RLIMIT_MEMLOCK, which this package does not
// raise.
//
// The programs are assembled and loaded here with bpf(2) directly (no cgo,
// no BPF library): the instructions are the few ALU, load and jump forms
// the prefix needs, and the kernel's own translated instructions.
//
// # Limits
//
//   - Programs are rebuilt from the kernel's translated ("xlated") instructions.
//     A program that calls helpers, refers to maps or BPF subprograms, or
//     whose constants the JIT blinded (net.core.bpf_jit_harden) cannot be
//     rebuilt faithfully, and a kernel that withholds the instructions
//     (kernel.kptr_restrict with blinding) gives none to rebuild: Allow then
//     fails with [ErrNotSupported] and changes nothing. The device programs of
//     runc, crun, systemd and LXC use none of those features.
//   - Programs attached through BPF links are not replaced (the kernel
//     refuses; Allow fails and changes nothing), nor are programs the caller
//     may not open (an LSM label): Allow fails rather than grant access that
//     such a program would still deny.
//   - Only programs attached to the container's own cgroup are changed; a
//     program attached to an ancestor with BPF_F_ALLOW_MULTI still applies.
//   - Access granted here is unknown to the runtime and to systemd: a later
//     "runc update" or "systemctl daemon-reload" rewrites the rules and takes
//     it away (NVIDIA/nvidia-container-toolkit#48). Runtimes that can be told
//     about the devices (OCI linux.devices, CDI) should be told instead.
//
// Undo functions must run in the reverse order of the Allow calls that
// returned them.
package cgroup
