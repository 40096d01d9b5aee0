package ldcache

// libcmp is glibc's _dl_cache_libcmp: it compares library names with runs
// of digits compared as numbers, so "libfoo.so.10" sorts after
// "libfoo.so.9". signed makes other bytes compare as C's signed char (x86),
// as ldconfig built for that machine does. Digit runs accumulate in a
// 32-bit int that wraps, as in C.
func libcmp(a, b string, signed bool) int {
	i, j := 0, 0
	for i < len(a) {
		switch {
		case isDigit(a[i]) && j < len(b) && isDigit(b[j]):
			var va, vb int32
			for ; i < len(a) && isDigit(a[i]); i++ {
				va = va*10 + int32(a[i]-'0')
			}
			for ; j < len(b) && isDigit(b[j]); j++ {
				vb = vb*10 + int32(b[j]-'0')
			}
			if va != vb {
				return int(va - vb)
			}
		case isDigit(a[i]):
			return 1
		case j < len(b) && isDigit(b[j]):
			return -1
		case j >= len(b) || a[i] != b[j]:
			return charAt(b, j, signed)*-1 + charAt(a, i, signed)
		default:
			i, j = i+1, j+1
		}
	}
	return -charAt(b, j, signed)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// charAt returns s[i] as C would see it, 0 past the end.
func charAt(s string, i int, signed bool) int {
	if i >= len(s) {
		return 0
	}
	if signed {
		return int(int8(s[i]))
	}
	return int(s[i])
}
