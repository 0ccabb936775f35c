package smb

import (
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// fakeWatcher holds changes until they are taken.
type fakeWatcher struct {
	mu      sync.Mutex
	changes []wire.NotifyEntry
}

func (w *fakeWatcher) Take() ([]wire.NotifyEntry, bool, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cs := w.changes
	w.changes = nil
	return cs, false, false
}

func (w *fakeWatcher) Close() {}

func (w *fakeWatcher) add(e wire.NotifyEntry) {
	w.mu.Lock()
	w.changes = append(w.changes, e)
	w.mu.Unlock()
}

// A CHANGE_NOTIFY waiting is answered with the changes as they were when
// they happened: a change made before its goroutine runs stays for the
// next request (smbtorture smb2.notify.mask-change, whose second rename
// must not join the first in one answer).
func TestNotifyWaiterTakesChangesWhenTheyHappen(t *testing.T) {
	fw := &fakeWatcher{}
	n := &notifyState{w: fw, closed: make(chan struct{})}
	first := &notifyWaiter{size: 4096, result: make(chan notifyResult, 1)}
	second := &notifyWaiter{size: 4096, result: make(chan notifyResult, 1)}
	n.waiting = []*notifyWaiter{first, second}
	fw.add(wire.NotifyEntry{Action: 3, Name: "a"})
	n.changed()
	fw.add(wire.NotifyEntry{Action: 3, Name: "b"})
	n.changed()
	want := func(w *notifyWaiter, name string) {
		t.Helper()
		res := <-w.result
		if res.status != statusSuccess || string(res.body) != string(wire.AppendChangeNotifyResponse(nil,
			wire.AppendNotifyEntries(nil, []wire.NotifyEntry{{Action: 3, Name: name}}))) {
			t.Fatalf("answer %#x %x, want the modification of %s alone", res.status, res.body, name)
		}
	}
	want(first, "a")
	want(second, "b")
	if len(n.waiting) != 0 {
		t.Fatalf("%d requests still waiting", len(n.waiting))
	}
	// A request leaving (cancelled) after it was answered keeps its answer.
	third := &notifyWaiter{size: 4096, result: make(chan notifyResult, 1)}
	n.waiting = []*notifyWaiter{third}
	fw.add(wire.NotifyEntry{Action: 1, Name: "c"})
	n.changed()
	if n.leave(third) {
		t.Fatal("an answered request left as if it had not been")
	}
}
