package ldcache

// SetReusedHook makes every directory an incremental build takes from the
// prior cache call f with its path (nil: none), for tests that check the
// reuse happened.
func SetReusedHook(f func(dir string)) { reusedHook = f }

// SetKnownHooks makes Build call known with each library it takes from
// BuildOptions.Known and read with each file it reads to classify (nil:
// none), for tests that count what a build opened.
func SetKnownHooks(known, read func(path string)) { knownHook, readHook = known, read }
