# Tests need root for namespaces, mounts and device nodes; NVC_REQUIRE_PRIVILEGED=1
# makes a privileged test fail instead of skipping when it cannot run.
#
# The end-to-end tests (real runc, crun and podman; build tag e2e) run after the others, not
# beside them: runtimes mount and unmount in the host namespace, and several
# packages' tests compare the host's mount table before and after their work.
#
# STATIC_PKGS are tested with CGO_ENABLED=0: the CDI hook compiles only so
# (every file is !cgo: a cgo build of it must be impossible, see its package
# doc; with cgo on, `go list ./...` leaves it out), and nvcontainer/cdihook,
# its logic, is tested as the hook ships it, once.
GO ?= go
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo -E env "PATH=$$PATH")
STATIC_PKGS = ./examples/nvidia-cdi-hook ./nvcontainer/cdihook
PKGS = $(shell $(GO) list ./... | grep -v -e '/e2e$$' -e '/examples/nvidia-cdi-hook$$' -e '/nvcontainer/cdihook$$')

.PHONY: test
test:
	$(SUDO) NVC_REQUIRE_PRIVILEGED=1 $(GO) test -count=1 $(PKGS)
	$(SUDO) NVC_REQUIRE_PRIVILEGED=1 CGO_ENABLED=0 $(GO) test -count=1 $(STATIC_PKGS)
	$(SUDO) NVC_REQUIRE_PRIVILEGED=1 $(GO) test -count=1 -tags e2e ./e2e

# On a host with an NVIDIA GPU: nvc's info against nvidia-smi -q, configure
# into a busybox runc container checked with nvidia-smi -L, configure timed
# with and without NVML (scripts/gpu-check.sh). Without a GPU it prints
# "skipped: no NVIDIA GPU" and succeeds.
.PHONY: gpu-check
gpu-check:
	$(SUDO) sh scripts/gpu-check.sh

# nvidia-container-cli, nvidia-container-runtime-hook and
# nvidia-container-runtime as they ship: built without cgo, their NVML
# helper nvc-nvml (cgo) beside them, into bin/.
.PHONY: cli
cli:
	CGO_ENABLED=0 $(GO) build -o bin/nvidia-container-cli ./examples/nvidia-container-cli
	CGO_ENABLED=0 $(GO) build -o bin/nvidia-container-runtime-hook ./examples/nvidia-container-runtime-hook
	CGO_ENABLED=0 $(GO) build -o bin/nvidia-container-runtime ./examples/nvidia-container-runtime
	$(GO) build -o bin/nvc-nvml ./examples/nvc-nvml
