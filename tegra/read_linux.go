package tegra

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// maxHostFile bounds the host files IsTegra and Release read (the release
// file is one line, the SoC family one word).
const maxHostFile = 64 << 10

// readInRoot reads the regular file p inside root (symlinks followed
// inside it, internal/inroot), at most maxHostFile bytes: a link to a
// file of the host running us, to /dev/zero or to a FIFO is not read.
func readInRoot(root, p string) ([]byte, error) {
	dir, err := os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return inroot.ReadRegular(dir, p, 0, maxHostFile)
}

// orRoot is root, "/" for "".
func orRoot(root string) string {
	if root == "" {
		return "/"
	}
	return root
}
