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
	// Ready is closed once changes (or an overflow) wait to be taken.
	Ready() <-chan struct{}
	// Take returns and forgets the changes collected, or overflow when
	// more arrived than the Watcher keeps, or deleting once the
	// directory is pending deletion or gone.
	Take() (changes []wire.NotifyEntry, overflow, deleting bool)
	Close()
}

// Watchable is a Handle of a Backend that reports changes: Watch starts a
// Watcher on the directory the handle has open, for its whole subtree
// when tree is set, of the changes filter (MS-SMB2 2.2.35
// CompletionFilter) asks for, keeping at most capacity bytes of them.
type Watchable interface {
	Watch(tree bool, filter uint32, capacity int) Watcher
}

// notifyState is an open's change notification: the Watcher its first
// CHANGE_NOTIFY started, which keeps collecting between requests, and the
// queue of requests waiting, answered in the order they came.
type notifyState struct {
	w      Watcher
	mu     sync.Mutex
	tail   chan struct{} // closed when the last request queued is done
	closed chan struct{} // closed when the open closes
}

// watch returns the open's notifyState, starting its Watcher with the
// first request's parameters (later requests cannot change them).
func (o *open) watch(wa Watchable, req *wire.ChangeNotifyRequest) *notifyState {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.notify == nil {
		o.notify = &notifyState{closed: make(chan struct{}),
			w: wa.Watch(req.WatchTree, req.CompletionFilter, int(req.OutputBufferLength))}
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

// enter queues a request: turn is closed when the requests before it are
// done (nil when none), and the request closes done when it is.
func (n *notifyState) enter() (turn, done chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	turn, n.tail = n.tail, make(chan struct{})
	return turn, n.tail
}

// changeNotify handles CHANGE_NOTIFY: it goes asynchronous and completes
// with the changes collected since the open's previous request (at once
// when there are some), STATUS_NOTIFY_ENUM_DIR when they do not fit the
// request's buffer or overflowed the open's, STATUS_CANCELLED on CANCEL
// STATUS_NOTIFY_CLEANUP when the open is closed and STATUS_DELETE_PENDING
// once the directory is to be deleted.
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
	turn, done := n.enter()
	// Changes collected before the request came answer it at once, as
	// Windows and Samba do: what it reports is fixed when it is read,
	// not when a goroutine gets to it, so a client's next operation
	// never slips into it.
	if isClosed(turn) {
		select {
		case <-n.w.Ready():
			if status, body, ok := n.collected(req.OutputBufferLength); ok {
				close(done)
				if body == nil {
					return c.errorResponse(r, status)
				}
				return c.newResponse(r, status, body)
			}
		default:
		}
	}
	op, actx, interim := c.goAsync(r)
	if op == nil {
		go func() {
			if turn != nil {
				<-turn
			}
			close(done)
		}()
		return interim
	}
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		defer func() {
			// The next request's turn comes once the ones before this
			// one are done too.
			go func() {
				if turn != nil {
					<-turn
				}
				close(done)
			}()
		}()
		empty := wire.AppendChangeNotifyResponse(nil, nil)
		select {
		case <-op.interimSent:
		case <-actx.Done():
			c.finishAsync(op, statusCancelled, nil)
			return
		}
		if turn != nil {
			select {
			case <-turn:
			case <-n.closed:
				c.finishAsync(op, statusNotifyCleanup, empty)
				return
			case <-actx.Done():
				c.finishAsync(op, statusCancelled, nil)
				return
			}
		}
		for {
			select {
			case <-n.closed:
				c.finishAsync(op, statusNotifyCleanup, empty)
				return
			case <-actx.Done():
				c.finishAsync(op, statusCancelled, nil)
				return
			case <-n.w.Ready():
			}
			if status, body, ok := n.collected(req.OutputBufferLength); ok {
				c.finishAsync(op, status, body)
				return
			}
		}
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

// isClosed reports whether c is nil or closed: no request waits before.
func isClosed(c chan struct{}) bool {
	if c == nil {
		return true
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}
