package driver_test

import (
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	securejoin "github.com/cyphar/filepath-securejoin"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/testutil"
)

// glibcEntry is one line of `ldconfig -p`.
type glibcEntry struct {
	key, flags, path string
}

var ldconfigLine = regexp.MustCompile(`^(\S+) \(([^)]*)\) => (\S+)$`)

// glibcListing parses the lines of glibc's `ldconfig -p -C cache`
// (testutil.LdconfigEntries, which logs the ldconfig version).
func glibcListing(t *testing.T, cache string) []glibcEntry {
	t.Helper()
	lines := testutil.LdconfigEntries(t, cache)
	var es []glibcEntry
	for _, l := range lines {
		if m := ldconfigLine.FindStringSubmatch(l); m != nil {
			es = append(es, glibcEntry{m[1], m[2], m[3]})
		}
	}
	require.NotEmpty(t, es, "ldconfig -p -C %s listed nothing:\n%s", cache, strings.Join(lines, "\n"))
	return es
}

// refSelect is a second implementation of libnvidia-container's selection,
// over glibc's listing of the cache, with filepath-securejoin for paths and
// debug/elf for the ELF checks: for each list name, the last entry whose
// key it prefixes and whose file passes.
func refSelect(root, version string, listing []glibcEntry, flags string, class elf.Class, names []string) map[string]string {
	sel := make(map[string]string)
	for _, e := range listing {
		if e.flags != flags {
			continue
		}
		for _, name := range names {
			if !strings.HasPrefix(e.key, name) {
				continue
			}
			if p, ok := refCheck(root, e.path, versionRule(name, version), class); ok {
				sel[name] = p
			}
			break
		}
	}
	return sel
}

// versionRule is the glob a selected file's name must match: the list
// name with the driver version, or, for an EGL platform library, the
// toolkit's "<name>.*.*".
func versionRule(name, version string) string {
	if slices.ContainsFunc(wantEGLPlatform, func(l eglLib) bool { return l.name == name }) {
		return name + ".*.*"
	}
	return "*." + version
}

func refCheck(root, p, rule string, class elf.Class) (string, bool) {
	full, err := securejoin.SecureJoin(root, p)
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(full); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	base := filepath.Base(full)
	if ok, _ := filepath.Match(rule, base); !ok {
		return "", false
	}
	f, err := elf.Open(full)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if f.Class != class || f.Type != elf.ET_DYN {
		return "", false
	}
	if strings.HasPrefix(base, "libnvidia-tls.so") && !hasNewTLSNote(f) {
		return "", false
	}
	if slices.ContainsFunc([]string{"libGL.so", "libEGL.so", "libGLESv1_CM.so", "libGLESv2.so"}, func(n string) bool { return strings.HasPrefix(base, n) }) {
		needed, _ := f.ImportedLibraries()
		if !slices.ContainsFunc(needed, func(n string) bool {
			return strings.HasPrefix(n, "libnvidia-glcore.so") || strings.HasPrefix(n, "libnvidia-eglcore.so")
		}) {
			return "", false
		}
	}
	return strings.TrimPrefix(full, root), true
}

// hasNewTLSNote reads the .note.ABI-tag section: GNU, type 1, Linux 2.3.99.
func hasNewTLSNote(f *elf.File) bool {
	s := f.Section(".note.ABI-tag")
	if s == nil {
		return false
	}
	b, err := s.Data()
	if err != nil || len(b) < 32 {
		return false
	}
	bo := f.ByteOrder
	return string(b[12:15]) == "GNU" && bo.Uint32(b[8:]) == 1 &&
		bo.Uint32(b[20:]) == 2 && bo.Uint32(b[24:]) == 3 && bo.Uint32(b[28:]) == 99
}

// TestLibrariesAgainstGlibc is acceptance test 3: glibc 2.36's ldconfig
// lists the generated cache, a second implementation selects from that
// listing, and Files must select exactly the same libraries — none the
// cache has is missed, none is added.
func TestLibrariesAgainstGlibc(t *testing.T) {
	for _, o := range hosts {
		for _, noGLVND := range []bool{false, true} {
			h, d := generate(t, o, driver.Options{NoGLVND: noGLVND})
			listing := glibcListing(t, filepath.Join(h.Root, "etc/ld.so.cache"))
			names := listNames(noGLVND)
			fs, err := d.Files(capabilities.All)
			require.NoError(t, err)
			for _, c := range []struct {
				flags string
				class elf.Class
				got   []driver.File
			}{{"libc6,x86-64", elf.ELFCLASS64, fs.Libraries}, {"libc6", elf.ELFCLASS32, fs.Libraries32}} {
				names := names
				if c.class == elf.ELFCLASS64 { // EGL platform libraries: native only
					for _, l := range wantEGLPlatform {
						names = append(slices.Clip(names), l.name)
					}
				}
				want := refSelect(h.Root, h.DriverVersion, listing, c.flags, c.class, names)
				got := map[string]string{}
				for _, f := range c.got {
					got[f.Name] = f.Path
				}
				assert.GreaterOrEqual(t, len(want), 10, "%s %s noGLVND=%v (%s): the reference, from ldconfig -p, is too short", h.DriverVersion, h.Layout, noGLVND, c.flags)
				assert.Equal(t, want, got, "%s %s noGLVND=%v (%s): Files selected against the reference, from ldconfig -p", h.DriverVersion, h.Layout, noGLVND, c.flags)
			}
		}
	}
}

func listNames(noGLVND bool) []string {
	var names []string
	gl := wantGLVND
	if noGLVND {
		gl = wantCompatGL
	}
	for _, l := range [][]hostLib{wantUtility, wantCompute, wantNGX, wantVideo, wantGraphics, gl} {
		for _, lib := range l {
			names = append(names, lib.name)
		}
	}
	return names
}
