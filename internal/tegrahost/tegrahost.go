// Package tegrahost is the module's one rule telling a Tegra host, as
// the NVIDIA Container Toolkit's platform detection tells one. Package
// tegra (IsTegra, CSVMode) and package devices (--load-kmods loads
// nvidia_modeset on a Tegra host without a PCI GPU) both ask it; it
// lives here because devices cannot import tegra (tegra's tests generate
// hosts through devices).
package tegrahost

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// ReleaseFile is the L4T release file, inside the driver root.
const ReleaseFile = "/etc/nv_tegra_release"

// FamilyFile is the SoC family, inside the sysfs root: "Tegra…" on a
// Tegra host.
const FamilyFile = "devices/soc0/family"

// MaxFile bounds the host files read (the release file is one line, the
// SoC family one word).
const MaxFile = 64 << 10

// IsTegra reports whether a host is a Tegra system: driverRoot's
// ReleaseFile is a regular file, or sysRoot's FamilyFile starts with
// "tegra" in any case, leading space ignored ("Tegra", "tegra234"). Each
// is read inside its root (symlinks followed inside it, at most MaxFile
// bytes, regular files only). The roots are host paths, already
// defaulted. The reason says which.
func IsTegra(driverRoot, sysRoot string) (bool, string) {
	rel := filepath.Join(driverRoot, ReleaseFile)
	if _, err := ReadInRoot(driverRoot, ReleaseFile); err == nil {
		return true, rel + " found"
	}
	fam := filepath.Join(sysRoot, FamilyFile)
	b, err := ReadInRoot(sysRoot, FamilyFile)
	if err != nil {
		return false, rel + " and " + fam + " not readable"
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(string(b))), "tegra") {
		return true, fam + " starts with tegra"
	}
	return false, fam + " does not start with tegra"
}

// ReadInRoot reads the regular file p inside root (symlinks followed
// inside it, internal/inroot), at most MaxFile bytes: a link to a file of
// the host running us, to /dev/zero or to a FIFO is not read.
func ReadInRoot(root, p string) ([]byte, error) {
	dir, err := os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return inroot.ReadRegular(dir, p, 0, MaxFile)
}
