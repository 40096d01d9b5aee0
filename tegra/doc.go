// Package tegra reads the host facts of a Jetson (Tegra) system that the
// NVIDIA Container Toolkit's CSV mode uses: the mount specs in
// /etc/nvidia-container-runtime/host-files-for-container.d/*.csv, the
// L4T release in /etc/nv_tegra_release, and whether the host is a Tegra
// system at all.
//
// # The CSV files
//
// Each line of a mount spec file is "KIND, PATH": KIND is one of
//
//   - dev: a character device node (/dev/nvmap; a bare name such as
//     "nvhost-gpu" means /dev/nvhost-gpu, as old JetPack files write it);
//   - lib: a library or other regular file, mounted at its path (a
//     symlink is followed, inside the root, to the file it names);
//   - sym: a symlink: the file its chain ends at is mounted and every
//     link of the chain is created in the container;
//   - dir: a directory, mounted at its path.
//
// Blank lines and lines starting with '#' are skipped; space around KIND
// and PATH is ignored. PATH may hold glob patterns (path.Match syntax:
// /dev/dri/card*), as the toolkit's locators glob every kind. A path that
// is relative (other than a dev name), holds a ".." element or a NUL, or
// is a malformed pattern, an unknown kind and a line without a comma are
// errors naming the file and line ([ErrSyntax]). The toolkit instead skips
// such lines with a debug message; refusing them says where a broken
// file is instead of leaving a container short of a library.
//
// [Files] lists the *.csv files of a directory as the toolkit does (not
// recursive, ".csv" itself skipped), [SelectFiles] keeps only the base
// files (devices.csv, drivers.csv, l4t.csv) unless the container's
// NVIDIA_REQUIRE_JETPACK is "csv-mounts=all", and [Load] parses a list of
// files, skipping the ones that do not exist (a JetPack 5 host has no
// l4t.csv). Files and Load take the root the directory and files lie in
// (a host's file system image, "/" for this host) and resolve them inside
// it, as [Resolve] does: a symlinked spec directory or file never leads
// out of the root, and only regular files are read.
//
// # On the host
//
// [Resolve] finds the entries on a host whose file system image is
// driver.Roots.Driver (and whose /dev is Roots.Dev): it expands the patterns,
// follows symlinks without leaving the root (an absolute link target is
// read inside the root), and returns what to bind, which nodes to allow
// and which links to make ([Mounts]). A missing path is a warning, as the
// toolkit logs and skips it. It only reads; package nvcontainer plans
// and applies the result (nvcontainer.NewCSVPlan).
//
// [IsTegra] tells a Tegra host as the toolkit's platform detection does:
// /etc/nv_tegra_release is a file, or /sys/devices/soc0/family starts
// with "tegra"; [CSVMode] is a Tegra host without /proc/driver/nvidia,
// configured in CSV mode. [Release] reads the L4T release of
// nv_tegra_release.
//
// The package uses no cgo.
package tegra
