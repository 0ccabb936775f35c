package main

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// hotCASMaxTries bounds the attempts of one blob-cas-hot operation: a
// server that lets one racer lose this often is starving it.
const hotCASMaxTries = 1000

// blobCASHot is a compare-and-swap race on one blob: every client reads
// the blob's ETag (Get Blob Properties) and writes it with If-Match of
// that ETag, starting over after 412 ConditionNotMet, until its write
// wins. One op is one won write; the note gives the attempts per win.
// Across instances sharing one database, this is the hottest key there
// is: every write conflicts with every other one in flight.
func blobCASHot(e *env) (*prepared, error) {
	body := pattern(smallBlobSize)
	var attempts, wins, most atomic.Int64
	p, err := blobWorkload(e, "cashot", func(c string) func(int) (op, error) {
		path := c + "/hot"
		return func(id int) (op, error) {
			if id == 0 {
				if _, err := putBlob(e.t, path, body, ""); err != nil {
					return nil, err
				}
			}
			head := &call{op: "Get Blob Properties", method: "HEAD", base: e.t.acct.Blob, path: path, want: 200}
			return func() error {
				for try := int64(1); try <= hotCASMaxTries; try++ {
					attempts.Add(1)
					h, err := e.t.do(head, nil)
					if err != nil {
						return err
					}
					etag := h.Get("ETag")
					if etag == "" {
						return fmt.Errorf("Get Blob Properties (%s) returned no ETag", path)
					}
					_, err = putBlob(e.t, path, body, etag)
					var re *requestError
					if errors.As(err, &re) && re.Status == 412 {
						continue // another racer won this round
					}
					if err != nil {
						return err
					}
					wins.Add(1)
					for m := most.Load(); try > m && !most.CompareAndSwap(m, try); m = most.Load() {
					}
					return nil
				}
				return fmt.Errorf("no win in %d compare-and-swap attempts", hotCASMaxTries)
			}, nil
		}
	})
	if p != nil {
		p.note = func() string {
			w := wins.Load()
			if w == 0 {
				return ""
			}
			return fmt.Sprintf("attempts per won write, warm-up included: mean %.2f, max %d (%d wins, %d lost to 412)",
				float64(attempts.Load())/float64(w), most.Load(), w, attempts.Load()-w)
		}
	}
	return p, err
}
