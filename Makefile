# Tests need root for namespaces, mounts and device nodes; NVC_REQUIRE_PRIVILEGED=1
# makes a privileged test fail instead of skipping when it cannot run.
#
# The end-to-end tests (real runc, crun and podman) run after the others, not
# beside them: runtimes mount and unmount in the host namespace, and several
# packages' tests compare the host's mount table before and after their work.
GO ?= go
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo -E env "PATH=$$PATH")
PKGS = $(shell $(GO) list ./... | grep -v '/e2e$$')

.PHONY: test
test:
	$(SUDO) NVC_REQUIRE_PRIVILEGED=1 $(GO) test -count=1 $(PKGS)
	$(SUDO) NVC_REQUIRE_PRIVILEGED=1 $(GO) test -count=1 ./e2e
