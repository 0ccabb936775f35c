package worker

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestKickedWorkIsSeen: whatever was announced before Kick is seen by a
// pass that ends before Wait returns, however Kicks and passes interleave.
func TestKickedWorkIsSeen(t *testing.T) {
	var l Loop
	var mu sync.Mutex
	announced, seen := 0, 0
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() {
		stopped <- l.Run(ctx, func(context.Context) {
			mu.Lock()
			seen = announced
			mu.Unlock()
			time.Sleep(time.Millisecond)
		})
	}()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				mu.Lock()
				announced++
				mine := announced
				mu.Unlock()
				l.Kick()
				if i%10 == g%10 {
					if err := l.Wait(context.Background()); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if seen < mine {
						t.Errorf("a pass saw %d announcements after Wait for the %dth", seen, mine)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	cancel()
	if err := <-stopped; err != context.Canceled {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
}

// TestFirstPassRunsUnasked: Run makes one pass at once, for work an
// earlier process left, and Wait without a Run waits for its context.
func TestFirstPassRunsUnasked(t *testing.T) {
	var l Loop
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Wait(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Wait without Run: %v", err)
	}
	var passes atomic.Int32
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go l.Run(runCtx, func(context.Context) { passes.Add(1) })
	if err := l.Wait(context.Background()); err != nil || passes.Load() != 1 {
		t.Fatalf("Wait: %v after %d passes, want 1", err, passes.Load())
	}
}
