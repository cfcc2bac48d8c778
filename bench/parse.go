package bench

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// Parse reads and decodes every file under dir with the decoder and the
// parallelism `eksdoctor check` uses, and does nothing else: the baseline the
// whole check is compared with. It returns the number of objects decoded.
func Parse(dir string) (int, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	counts := make([]int, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				data, err := os.ReadFile(files[i])
				if err != nil {
					errs[i] = err
					continue
				}
				objs, _ := manifest.DecodeFile(files[i], data)
				counts[i] = len(objs)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	n := 0
	for i, c := range counts {
		if errs[i] != nil {
			return 0, errs[i]
		}
		n += c
	}
	return n, nil
}
