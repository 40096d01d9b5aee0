package ns

import "strings"

// IdentityMap reports whether an id map (the text of /proc/PID/uid_map or
// gid_map) maps every id to itself, as the initial user namespace's does.
func IdentityMap(m string) bool {
	return strings.Join(strings.Fields(m), " ") == "0 0 4294967295"
}
