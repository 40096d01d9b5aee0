// Package e2e holds the end-to-end tests: the example programs, built once
// per test binary, run as a user or a runtime would run them — under real
// runc, crun and podman, on a simulated host (internal/fakehost) whose
// device nodes are real character devices.
//
// Files: runc_* (the hook under runc and crun, directly and through
// nvidia-container-runtime), cli_* (nvidia-container-cli: golden output,
// option parsing, error prefixes, a refused configure), docker_* (dockerd
// started by the test: --gpus, --runtime=nvidia with the daemon.json
// nvidia-ctk runtime configure wrote, nvidia-docker), containerd_*
// (containerd 1.6 on the config.toml runtime configure wrote, ctr run
// --runc-binary our runtime in legacy and jit-cdi mode), hook_* (the hook's
// own behaviour), bench_* (whole-process benchmarks), cdi_* and ldpreload_*
// (the CDI generator under podman, LD_PRELOAD immunity), userns_* and
// rootless_* (runc with a user namespace, rootless podman), helpers_* (shared
// fixtures). They carry the e2e build tag, so a plain `go test ./...` leaves
// them out; `make test` runs them with `go test -tags e2e ./e2e` after the
// other packages. Run `go test -tags e2e ./e2e -update` to rewrite
// testdata/*.golden.
//
// # What they need and change
//
// Root, and runc, crun, podman, dockerd and docker, jq, busybox (static),
// gcc and glibc's ldconfig in PATH (Debian 12: apt-get install runc crun
// podman docker.io jq busybox-static gcc-multilib). Without them the tests skip locally and
// fail under NVC_REQUIRE_PRIVILEGED=1 (testutil's gate). They build the
// examples into a temp dir, run containers whose state and storage are
// temp dirs of their own, write CDI specs to /var/run/cdi (removed
// afterwards) and, for crun on a hybrid cgroup layout, mount the hugetlb
// cgroup v1 hierarchy, which stays until reboot. The Docker tests start
// dockerd (and the containerd it manages) in a private mount namespace
// whose /run is a tmpfs and whose /etc an overlay, with data and exec
// roots in a temp dir, and remove its containers' cgroup parent
// (nvc-e2e-docker) afterwards; the containerd test likewise, with its
// root, state, socket and ctr's FIFOs in a temp dir, and removes the
// nvc-e2e cgroup parent. The rootless tests create an unprivileged user
// (useradd, with subordinate ids in /etc/subuid and /etc/subgid; they need
// newuidmap and newgidmap, Debian's uidmap) and a cgroup v1 devices cgroup,
// run podman as the user in a private mount namespace whose /dev is an
// overlay holding the simulated nodes, and remove the user (its processes
// first), its ids and the cgroup afterwards, checking that the account
// files are as before.
//
// # When not to use them
//
// They are slow (minutes: real containers) and need the machine to
// themselves for the runtimes' cgroups; unit behaviour belongs in the
// packages' own tests. This file exists so that the package has
// documentation; the tests are in the _test.go files.
package e2e
