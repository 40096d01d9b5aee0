package toolkit

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"tags.cncf.io/container-device-interface/pkg/cdi"
	cdispecs "tags.cncf.io/container-device-interface/specs-go"
)

// DeviceRequestVar is the variable a container asks for GPUs with.
const DeviceRequestVar = "NVIDIA_VISIBLE_DEVICES"

// InjectCDI applies to spec the edits of the named devices (fully
// qualified CDI names) and of the specs that define them, read from the
// CDI spec files in dirs (a later dir wins over an earlier one), as a CDI
// runtime does (the CDI module's Cache.InjectDevices). A name no spec
// defines is an error listing it. Then the device request is removed from
// the environment ([VoidDeviceRequest]), so a legacy hook that is also
// registered injects nothing a second time.
func InjectCDI(spec *specs.Spec, names []string, dirs []string) error {
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dirs...), cdi.WithAutoRefresh(false))
	if err != nil && cache == nil {
		return fmt.Errorf("reading CDI specs in %q: %w", dirs, err)
	}
	if _, err := cache.InjectDevices(spec, names...); err != nil {
		var specErrs []error
		for file, errs := range cache.GetErrors() {
			specErrs = append(specErrs, fmt.Errorf("%s: %w", file, errors.Join(errs...)))
		}
		return fmt.Errorf("injecting CDI devices %q from %q: %w", names, dirs, errors.Join(append([]error{err}, specErrs...)...))
	}
	VoidDeviceRequest(spec)
	return nil
}

// InjectSpec applies to spec the edits of the named devices of cdiSpec, a
// spec made in process (jit-cdi), with the CDI module's rules: the spec is
// validated and written to a private temporary directory that only this
// call reads, then removed.
func InjectSpec(spec *specs.Spec, cdiSpec *cdispecs.Spec, names []string) error {
	dir, err := os.MkdirTemp("", "nvc-jit-cdi-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dir), cdi.WithAutoRefresh(false))
	if err != nil {
		return err
	}
	if err := cache.WriteSpec(cdiSpec, "jit"); err != nil {
		return fmt.Errorf("writing the CDI spec of %q: %w", names, err)
	}
	return InjectCDI(spec, names, []string{dir})
}

// VoidDeviceRequest sets every NVIDIA_VISIBLE_DEVICES of spec's process
// environment to "void" (adding one when there is none), the value that
// asks for no GPU.
func VoidDeviceRequest(spec *specs.Spec) {
	if spec.Process == nil {
		spec.Process = &specs.Process{}
	}
	const void = DeviceRequestVar + "=void"
	found := false
	for i, kv := range spec.Process.Env {
		if strings.HasPrefix(kv, DeviceRequestVar+"=") {
			spec.Process.Env[i] = void
			found = true
		}
	}
	if !found {
		spec.Process.Env = append(spec.Process.Env, void)
	}
}
