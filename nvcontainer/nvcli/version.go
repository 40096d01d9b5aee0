package nvcli

import (
	"bufio"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// modulePath is this module's path, whose version is the lib-version.
const modulePath = "github.com/go-nvc/nvc"

// WriteVersion writes the seven lines of nvidia-container-cli --version
// for the program bi describes (from debug.ReadBuildInfo; nil: "(devel)"
// and unknown build facts): the program's version (cli-version), this
// module's (lib-version: the program's own when it is this module, else
// the dependency's), the build date and revision (the VCS's), the
// compiler, the platform and the flags that change the binary
// (CGO_ENABLED, -tags, -trimpath, -ldflags).
func WriteVersion(w io.Writer, bi *debug.BuildInfo) error {
	cli, lib, settings := "(devel)", "(devel)", map[string]string{}
	if bi != nil {
		cli, lib = bi.Main.Version, libVersion(bi)
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
	}
	var flags []string
	for _, k := range []string{"CGO_ENABLED", "-tags", "-trimpath", "-ldflags"} {
		if v, ok := settings[k]; ok {
			flags = append(flags, k+"="+v)
		}
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "cli-version: %s\nlib-version: %s (%s)\n", cli, lib, modulePath)
	fmt.Fprintf(bw, "build date: %s\nbuild revision: %s\n", or(settings["vcs.time"], "unknown"), or(settings["vcs.revision"], "unknown"))
	fmt.Fprintf(bw, "build compiler: %s\nbuild platform: %s/%s\n", settings["-compiler"], settings["GOOS"], settings["GOARCH"])
	fmt.Fprintf(bw, "build flags: %s\n", strings.Join(flags, " "))
	return bw.Flush()
}

// libVersion is the version of this module in the program bi describes.
func libVersion(bi *debug.BuildInfo) string {
	if bi.Main.Path == modulePath {
		return bi.Main.Version
	}
	for _, m := range bi.Deps {
		if m.Path == modulePath {
			if m.Replace != nil {
				m = m.Replace
			}
			return or(m.Version, "(devel)")
		}
	}
	return "(devel)"
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
