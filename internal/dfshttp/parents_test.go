package dfshttp

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// A Blob write makes its parent directories in its own transaction: a
// listing racing the writes never shows a blob without the directories
// above it.
func TestBlobWriteParentsAtomic(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/cont?restype=container", nil, ""), 201, "")
	names := regexp.MustCompile(`<Name>([^<]*)</Name>`)
	var done atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				w := send(t, h, "PUT", fmt.Sprintf("%s/cont/w%d/d%d/f.txt", acct, g, i), map[string]string{"x-ms-blob-type": "BlockBlob"}, "data")
				if w.Code != 201 {
					t.Errorf("put: %d %s", w.Code, w.Body.String())
					return
				}
			}
		}(g)
	}
	var orphans []string
	var reads int
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for !done.Load() {
			reads++
			body := send(t, h, "GET", acct+"/cont?restype=container&comp=list", nil, "").Body.String()
			seen := map[string]bool{}
			for _, m := range names.FindAllStringSubmatch(body, -1) {
				seen[m[1]] = true
			}
			for n := range seen {
				for p := n; strings.Contains(p, "/"); {
					p = p[:strings.LastIndexByte(p, '/')]
					if !seen[p] {
						orphans = append(orphans, n+" without "+p)
					}
				}
			}
		}
	}()
	wg.Wait()
	done.Store(true)
	rwg.Wait()
	if len(orphans) > 0 {
		t.Fatalf("%d of %d listings showed a blob without its directories, e.g. %s", len(orphans), reads, orphans[0])
	}
}
