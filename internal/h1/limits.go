package h1

import "sync/atomic"

// Limits on a request's head, at the scale Azure Storage's front end
// accepts: a request target of 32 KiB leaves room for a Table point
// address with two 1 KiB keys percent-encoded, and a 16 KiB header field
// for a copy source URL with its SAS or a bearer token; 64 KiB in all fits
// 8 KiB of metadata with everything else. A longer target is answered 414,
// a longer field or head 400, as Azure answers them (its HTTP.sys front
// end: "Request URL Too Long", "Request Header Fields Too Long").
const (
	MaxURIBytes    = 32 << 10
	MaxFieldBytes  = 16 << 10
	MaxHeaderBytes = 64 << 10
)

// DefaultHeaderBudget is the budget a Server without one uses.
const DefaultHeaderBudget = 16 << 20

// budgetStep is the unit in which a connection reserves head bytes beyond
// the first readBufSize, which its read buffer holds anyway: ordinary
// requests never touch the shared counter.
const budgetStep = 4 << 10

// Budget bounds the bytes of request heads that connections hold before
// their handlers have run (and so before any request is authenticated),
// across every server that shares it. A request whose head would go over
// it is answered 503 and its connection closed, so that many slow clients
// cannot pile up memory.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Reserve takes n bytes from the budget and reports whether they were
// available.
func (b *Budget) Reserve(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// Release gives n reserved bytes back.
func (b *Budget) Release(n int64) { b.used.Add(-n) }

// Used returns the bytes reserved now.
func (b *Budget) Used() int64 { return b.used.Load() }

// The refusals of a request head for its limits. Without Server.Refused
// each is answered in plain text with the status its text names; with it,
// the hook answers.
var (
	ErrURITooLong   error = errURITooLong
	ErrFieldTooLong error = errFieldTooLong
	ErrHeadTooLarge error = errHeadTooLarge
	ErrOverBudget   error = errOverBudget
)

var (
	errURITooLong   = &protoError{text: "414 Request-URI Too Long", detail: "Request URL Too Long"}
	errFieldTooLong = &protoError{text: "400 Bad Request", detail: "Request Header Fields Too Long"}
	errHeadTooLarge = &protoError{text: "400 Bad Request", detail: "Request Header Fields Too Large"}
	errOverBudget   = &protoError{text: "503 Service Unavailable", detail: "Server Busy"}
)

// isLimit reports whether err is one of the head limit refusals.
func isLimit(err error) bool {
	return err == errURITooLong || err == errFieldTooLong || err == errHeadTooLarge || err == errOverBudget
}

// chargeHead reserves from the budget what a head of n bytes needs.
func (c *conn) chargeHead(n int) error {
	for n > readBufSize+c.reserved {
		if !c.srv.budget().Reserve(budgetStep) {
			return errOverBudget
		}
		c.reserved += budgetStep
	}
	return nil
}

// releaseHead returns the connection's reservation once its request is
// over.
func (c *conn) releaseHead() {
	if c.reserved > 0 {
		c.srv.budget().Release(int64(c.reserved))
		c.reserved = 0
	}
	if cap(c.line) > readBufSize {
		c.line = nil
	}
}
