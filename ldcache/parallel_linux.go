package ldcache

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallel runs do(0…n-1) on up to GOMAXPROCS goroutines (at most 8, and
// none for small n), giving each a scratch buffer of scratchSize bytes:
// the calling goroutine bufs[0], the others the next ones, made here the
// first time and kept in *bufs for the next call.
func parallel(n int, do func(i int, buf []byte), bufs *[][]byte) {
	workers := min(runtime.GOMAXPROCS(0), 8, (n+15)/16)
	if workers <= 1 {
		for i := range n {
			do(i, (*bufs)[0])
		}
		return
	}
	for len(*bufs) < workers {
		*bufs = append(*bufs, make([]byte, scratchSize))
	}
	var next atomic.Int64
	work := func(buf []byte) {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			do(i, buf)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { work((*bufs)[w]) })
	}
	work((*bufs)[0])
	wg.Wait()
}
