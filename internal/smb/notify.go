package smb

import (
	"sync"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// CHANGE_NOTIFY statuses (MS-ERREF 2.3).
const (
	statusNotifyCleanup uint32 = 0x0000010B
	statusNotifyEnumDir uint32 = 0x0000010C
)

// Watcher collects the changes below a directory for CHANGE_NOTIFY.
type Watcher interface {
	// Take returns and forgets the changes collected, or overflow when
	// more arrived than the Watcher keeps, or deleting once the
	// directory is pending deletion or gone.
	Take() (changes []wire.NotifyEntry, overflow, deleting bool)
	Close()
}

// Watchable is a Handle of a Backend that reports changes: Watch starts a
// Watcher on the directory the handle has open, for its whole subtree
// when tree is set, of the changes filter (MS-SMB2 2.2.35
// CompletionFilter) asks for, keeping at most capacity bytes of them;
// changed runs, without blocking, in the goroutine that made changes
// once they can be taken.
type Watchable interface {
	Watch(tree bool, filter uint32, capacity int, changed func()) Watcher
}

// notifyState is an open's change notification: the Watcher its first
// CHANGE_NOTIFY started, which keeps collecting between requests, and the
// requests waiting, answered in the order they came, each with the
// changes there are when it is its turn: at once, or as soon as changes
// happen (changed), so that what a request reports is fixed when the
// changes are made, not when a goroutine gets to them.
type notifyState struct {
	mu      sync.Mutex // guards w (once set) and waiting
	w       Watcher
	waiting []*notifyWaiter
	closed  chan struct{} // closed when the open closes
}

// notifyWaiter is a CHANGE_NOTIFY waiting; result receives its answer
// once, when it leaves notifyState.waiting that way.
type notifyWaiter struct {
	size   uint32
	result chan notifyResult
}

type notifyResult struct {
	status uint32
	body   []byte // nil: an error response
}

// watch returns the open's notifyState, starting its Watcher with the
// first request's parameters (later requests cannot change them).
func (o *open) watch(wa Watchable, req *wire.ChangeNotifyRequest) *notifyState {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.notify == nil {
		n := &notifyState{closed: make(chan struct{})}
		w := wa.Watch(req.WatchTree, req.CompletionFilter, int(req.OutputBufferLength), n.changed)
		n.mu.Lock()
		n.w = w
		n.mu.Unlock()
		o.notify = n
	}
	return o.notify
}

// stopNotify ends the open's change notification: requests waiting are
// answered STATUS_NOTIFY_CLEANUP (MS-SMB2 3.3.5.10).
func (o *open) stopNotify() {
	o.mu.Lock()
	n := o.notify
	o.mu.Unlock()
	if n != nil {
		n.mu.Lock()
		select {
		case <-n.closed:
		default:
			close(n.closed)
			n.w.Close()
		}
		n.mu.Unlock()
	}
}

// changed answers the requests waiting, oldest first, while there are
// changes to answer them with.
func (n *notifyState) changed() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.w == nil {
		return // the first request has not started waiting yet
	}
	for len(n.waiting) > 0 {
		status, body, ok := n.collected(n.waiting[0].size)
		if !ok {
			return
		}
		n.waiting[0].result <- notifyResult{status, body}
		n.waiting = n.waiting[1:]
	}
}

// leave takes w out of the requests waiting; false means it was answered
// already (its result is there to take).
func (n *notifyState) leave(w *notifyWaiter) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, x := range n.waiting {
		if x == w {
			n.waiting = append(n.waiting[:i], n.waiting[i+1:]...)
			return true
		}
	}
	return false
}

// changeNotify handles CHANGE_NOTIFY: it completes with the changes
// collected since the open's previous request (at once when there are
// some and no request waits before it), STATUS_NOTIFY_ENUM_DIR when they
// do not fit the request's buffer or overflowed the open's,
// STATUS_CANCELLED on CANCEL, STATUS_NOTIFY_CLEANUP when the open is
// closed and STATUS_DELETE_PENDING once the directory is to be deleted.
func (c *conn) changeNotify(r *request) *response {
	req, err := wire.DecodeChangeNotify(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	wa, ok := o.h.(Watchable)
	switch {
	case o.h == nil || !ok:
		return c.errorResponse(r, statusNotSupported)
	case !o.isDir || req.OutputBufferLength > c.maxIO:
		return c.errorResponse(r, statusInvalidParameter)
	case o.access&FileReadData == 0: // FILE_LIST_DIRECTORY
		return c.errorResponse(r, statusAccessDenied)
	}
	if resp := c.midCompound(r); resp != nil {
		return resp
	}
	n := o.watch(wa, &req)
	answer := func(res notifyResult) *response {
		if res.body == nil {
			return c.errorResponse(r, res.status)
		}
		return c.newResponse(r, res.status, res.body)
	}
	w := &notifyWaiter{size: req.OutputBufferLength, result: make(chan notifyResult, 1)}
	n.mu.Lock()
	if len(n.waiting) == 0 {
		// Changes collected before the request came answer it at once,
		// as Windows and Samba do.
		if status, body, ok := n.collected(req.OutputBufferLength); ok {
			n.mu.Unlock()
			return answer(notifyResult{status, body})
		}
	}
	n.waiting = append(n.waiting, w)
	n.mu.Unlock()
	op, actx, interim := c.goAsync(r)
	if op == nil {
		if n.leave(w) {
			return interim
		}
		return answer(<-w.result)
	}
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		var res notifyResult
		select {
		case res = <-w.result:
		case <-n.closed:
			res = notifyResult{statusNotifyCleanup, wire.AppendChangeNotifyResponse(nil, nil)}
			if !n.leave(w) {
				res = <-w.result // answered as the open closed
			}
		case <-actx.Done():
			res = notifyResult{status: statusCancelled}
			if !n.leave(w) {
				res = <-w.result // answered as it was cancelled
			}
		}
		c.finishAsync(op, res.status, res.body)
	}()
	return interim
}

// collected takes the changes the Watcher holds and returns the answer
// to a request whose buffer holds size bytes (body nil for an error), or
// ok false when there was nothing to take.
func (n *notifyState) collected(size uint32) (status uint32, body []byte, ok bool) {
	changes, overflow, deleting := n.w.Take()
	switch {
	case deleting:
		return statusDeletePending, nil, true
	case overflow:
		return statusNotifyEnumDir, wire.AppendChangeNotifyResponse(nil, nil), true
	case len(changes) == 0:
		return 0, nil, false
	}
	out := wire.AppendNotifyEntries(nil, changes)
	if len(out) > int(size) {
		return statusNotifyEnumDir, wire.AppendChangeNotifyResponse(nil, nil), true
	}
	return statusSuccess, wire.AppendChangeNotifyResponse(nil, out), true
}
