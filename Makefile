# Tests need root for namespaces, mounts and device nodes; NVC_REQUIRE_PRIVILEGED=1
# makes a privileged test fail instead of skipping when it cannot run.
GO ?= go
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo -E env "PATH=$$PATH")

.PHONY: test
test:
	$(SUDO) NVC_REQUIRE_PRIVILEGED=1 $(GO) test -count=1 ./...
