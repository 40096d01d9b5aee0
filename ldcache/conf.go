package ldcache

import (
	"bytes"
	"path"
	"strings"
)

// confLine is one meaningful line of an ld.so.conf file.
type confLine struct {
	line     int
	dir      string   // a directory line (already without leading blanks)
	includes []string // the words of an include line
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// parseConf splits an ld.so.conf file into directory and include lines,
// as glibc's parse_conf reads it: a '#' ends the line, leading blanks are
// skipped, "include" takes blank-separated glob patterns, and "hwcap"
// lines are ignored.
func parseConf(data []byte) []confLine {
	var out []confLine
	lines := bytes.Split(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for n, raw := range lines {
		s := string(raw)
		if i := strings.IndexAny(s, "#\x00"); i >= 0 {
			s = s[:i] // C strings end at NUL
		}
		s = strings.TrimLeftFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
		switch {
		case s == "":
		case strings.HasPrefix(s, "include") && len(s) > 7 && (s[7] == ' ' || s[7] == '\t'):
			out = append(out, confLine{line: n + 1, includes: includeWords(s[8:])})
		case len(s) > 5 && strings.EqualFold(s[:5], "hwcap") && (s[5] == ' ' || s[5] == '\t'):
		default:
			out = append(out, confLine{line: n + 1, dir: s})
		}
	}
	return out
}

func includeWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
}

// includePattern makes a relative include pattern relative to the
// directory of the file that holds it, as glibc does.
func includePattern(confFile, pattern string) string {
	if strings.HasPrefix(pattern, "/") || !strings.Contains(confFile, "/") {
		return pattern
	}
	return path.Dir(confFile) + "/" + pattern
}

// dirLine splits a directory line into its path and library type
// ("/usr/lib=libc6"), trimming trailing blanks and slashes as glibc's
// add_dir_1 does. An empty path means the line adds nothing.
func dirLine(s string) (string, int32) {
	flag := int32(flagAny)
	if i := strings.IndexByte(s, '='); i >= 0 {
		flag = libType(s[i+1:])
		s = s[:i]
	}
	s = strings.TrimRightFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
	return strings.TrimRight(s, "/"), flag
}

func libType(s string) int32 {
	switch s {
	case "libc4":
		return 0
	case "libc5":
		return flagLibc5
	case "libc6", "glibc2":
		return flagLibc6
	}
	return flagAny
}

// isDSO is glibc's _dl_is_dso: lib*.so*, ld-*.so*, ld.so.*, ld64.so.*.
func isDSO(name string) bool {
	return ((strings.HasPrefix(name, "lib") || strings.HasPrefix(name, "ld-")) && strings.Contains(name, ".so")) ||
		strings.HasPrefix(name, "ld.so.") || strings.HasPrefix(name, "ld64.so.")
}

// isPrelinkTemp reports the temporary names prelink leaves behind.
func isPrelinkTemp(name string) bool {
	if strings.HasSuffix(name, ".#prelink#") {
		return true
	}
	const t = ".#prelink#."
	return len(name) >= len(t)+6 && strings.HasPrefix(name[len(name)-len(t)-6:], t)
}

// implicitSoname is the name a library without DT_SONAME is listed under:
// its file name (cut after the major version for libc4 a.out files).
func implicitSoname(lib string, flag int32) string {
	if flag&FlagTypeMask != 0 {
		return lib
	}
	return aoutSoname(lib)
}
