package ldcache

// SetReusedHook makes every directory an incremental build takes from the
// prior cache call f with its path (nil: none), for tests that check the
// reuse happened.
func SetReusedHook(f func(dir string)) { reusedHook = f }
