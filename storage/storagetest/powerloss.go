package storagetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/storage"
)

// PowerOpener opens the engine kept in dir on fsys (creating it if dir is
// empty), in its durable (sync) mode.
type PowerOpener func(fsys filestore.FS, dir string) (storage.Engine, error)

// Rounds of RunPowerLoss and the load of each.
const (
	powerRounds  = 12
	powerWorkers = 8
)

// RunPowerLoss cuts the power under an engine again and again, on a
// PowerFS: each round opens the engine on what the last cut left, checks
// that every Update acknowledged in any earlier round is there and whole
// and that every chunk a committed record points to is whole, then runs
// concurrent Updates (some pointing at fresh chunks) and cuts the power
// at a random moment, which drops or tears at random every write not yet
// fsynced. The random seed is logged with every run.
func RunPowerLoss(t *testing.T, open PowerOpener) {
	const dir = "/data"
	fsys := NewPowerFS()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, uint64(len(t.Name()))))
	all := map[string][]ack{}
	var rounds []string
	for n := range powerRounds {
		round := fmt.Sprintf("p%02d", n)
		s, err := open(fsys, dir)
		if err != nil {
			t.Fatalf("round %s: open after a power cut: %v", round, err)
		}
		for _, r := range rounds {
			checkCrashRound(t, s, r, all[r])
		}
		// Cut after a random number of acknowledged Updates, sometimes
		// none, so that the cut lands anywhere in the load.
		cutAfter := rng.IntN(400)
		// A cut also lands while nothing is being acknowledged at all.
		early := rng.IntN(4) == 0
		pause := time.Duration(rng.IntN(30)) * time.Millisecond
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		var acks []ack
		var next *PowerFS
		cut := func() {
			if next == nil {
				next = fsys.Cut(rng)
				cancel()
			}
		}
		var wg sync.WaitGroup
		for g := range powerWorkers {
			wg.Go(func() {
				writeLoad(ctx, s, round, g, func(a ack) {
					mu.Lock()
					defer mu.Unlock()
					acks = append(acks, a)
					if len(acks) >= cutAfter {
						cut()
					}
				})
			})
		}
		time.Sleep(pause)
		if early {
			mu.Lock()
			cut()
			mu.Unlock()
		}
		wg.Wait()
		mu.Lock()
		cut()
		mu.Unlock()
		s.Close() // fails: the power is off
		t.Logf("round %s: %d Updates acknowledged before the cut", round, len(acks))
		all[round] = acks
		rounds = append(rounds, round)
		fsys = next
	}
	s, err := open(fsys, dir)
	if err != nil {
		t.Fatalf("open after the last power cut: %v", err)
	}
	defer s.Close()
	for _, r := range rounds {
		checkCrashRound(t, s, r, all[r])
	}
}
