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
	parallelEach(n, 16, do, bufs)
}

// parallelCheap is parallel for jobs of one system call (a readlink, a
// stat), where waking a goroutine costs more than a few dozen jobs: at
// least 128 jobs a goroutine.
func parallelCheap(n int, do func(i int, buf []byte), bufs *[][]byte) {
	parallelEach(n, 128, do, bufs)
}

func parallelEach(n, per int, do func(i int, buf []byte), bufs *[][]byte) {
	workers := min(runtime.GOMAXPROCS(0), 8, (n+per-1)/per)
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
