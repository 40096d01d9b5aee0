package cdispec

import (
	"fmt"

	"tags.cncf.io/container-device-interface/pkg/cdi"
	"tags.cncf.io/container-device-interface/pkg/parser"
	specs "tags.cncf.io/container-device-interface/specs-go"
)

// Validate checks spec with the CDI module's own rules, the ones a
// runtime applies when it loads the file: a known cdiVersion that is at
// least what the content needs, a valid vendor, class and device names,
// valid edits (device nodes, mounts, hooks, env), at least one device,
// no empty device and no duplicate name. It also refuses a hook without an
// environment (CVE-2025-23266), which the CDI module allows.
func Validate(spec *specs.Spec) error {
	if err := validateCDIHeader(spec); err != nil {
		return err
	}
	if err := validateCDIEdits("spec", &spec.ContainerEdits); err != nil {
		return err
	}
	if len(spec.Devices) == 0 {
		return fmt.Errorf("validating CDI spec %s: no devices: %w", spec.Kind, ErrInvalid)
	}
	seen := map[string]bool{}
	for i := range spec.Devices {
		d := &spec.Devices[i]
		if err := validateCDIDevice(d); err != nil {
			return err
		}
		if seen[d.Name] {
			return fmt.Errorf("validating CDI spec %s: device %q twice: %w", spec.Kind, d.Name, ErrInvalid)
		}
		seen[d.Name] = true
	}
	return nil
}

func validateCDIHeader(spec *specs.Spec) error {
	if err := specs.ValidateVersion(spec); err != nil {
		return fmt.Errorf("validating CDI spec %s: %w (%w)", spec.Kind, err, ErrInvalid)
	}
	vendor, class := parser.ParseQualifier(spec.Kind)
	if err := parser.ValidateVendorName(vendor); err != nil {
		return fmt.Errorf("validating CDI spec kind %q: %w (%w)", spec.Kind, err, ErrInvalid)
	}
	if err := parser.ValidateClassName(class); err != nil {
		return fmt.Errorf("validating CDI spec kind %q: %w (%w)", spec.Kind, err, ErrInvalid)
	}
	return nil
}

func validateCDIDevice(d *specs.Device) error {
	if err := parser.ValidateDeviceName(d.Name); err != nil {
		return fmt.Errorf("validating CDI device %q: %w (%w)", d.Name, err, ErrInvalid)
	}
	e := d.ContainerEdits
	if len(e.Env) == 0 && len(e.DeviceNodes) == 0 && len(e.Hooks) == 0 && len(e.Mounts) == 0 &&
		len(e.NetDevices) == 0 && e.IntelRdt == nil && len(e.AdditionalGIDs) == 0 {
		return fmt.Errorf("validating CDI device %q: no edits: %w", d.Name, ErrInvalid)
	}
	return validateCDIEdits("device "+d.Name, &d.ContainerEdits)
}

func validateCDIEdits(what string, e *specs.ContainerEdits) error {
	if err := (&cdi.ContainerEdits{ContainerEdits: e}).Validate(); err != nil {
		return fmt.Errorf("validating CDI %s: %w (%w)", what, err, ErrInvalid)
	}
	for _, h := range e.Hooks {
		if len(h.Env) == 0 {
			return fmt.Errorf("validating CDI %s: hook %s has no explicit environment: %w", what, h.Path, ErrInvalid)
		}
	}
	return nil
}
