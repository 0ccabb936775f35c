package smb

import (
	"sync"
	"testing"
	"time"
)

// TestWorkersRunConcurrently: tasks that wait for each other all run at
// once (none queues behind a busy worker), idle workers take the next
// tasks instead of new goroutines, and close ends the idle ones.
func TestWorkersRunConcurrently(t *testing.T) {
	w := newWorkers(time.Minute)
	const n = 8
	var all, done sync.WaitGroup
	all.Add(n)
	done.Add(n)
	for range n {
		w.run(func() {
			defer done.Done()
			all.Done()
			all.Wait() // returns only once all n run at the same time
		})
	}
	done.Wait()
	if got := w.started.Load(); got != n {
		t.Fatalf("%d workers started for %d concurrent tasks", got, n)
	}
	// One task at a time, with time for the worker to go idle: the
	// idle workers serve them all.
	for range 100 {
		ran := make(chan struct{})
		w.run(func() { close(ran) })
		<-ran
		for deadline := time.Now().Add(time.Second); w.idleWorkers() < n && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
	}
	if got := w.started.Load(); got != n {
		t.Errorf("%d workers started in all, want the %d idle ones reused", got, n)
	}
	w.close()
	for deadline := time.Now().Add(5 * time.Second); w.live.Load() > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers still live after close", w.live.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWorkersIdleEnd: a worker without work ends after its idle time.
func TestWorkersIdleEnd(t *testing.T) {
	w := newWorkers(10 * time.Millisecond)
	defer w.close()
	ran := make(chan struct{})
	w.run(func() { close(ran) })
	<-ran
	for deadline := time.Now().Add(5 * time.Second); w.live.Load() > 0; {
		if time.Now().After(deadline) {
			t.Fatal("an idle worker did not end")
		}
		time.Sleep(time.Millisecond)
	}
}
