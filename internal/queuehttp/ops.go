package queuehttp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// req bundles what every operation reads.
type req struct {
	w    http.ResponseWriter
	r    *http.Request
	info *httpx.Info
	q    url.Values
	name string // the queue
	id   string // the message id as given in the path
}

// op is one Queue operation: the REST operation's name (for the access
// log), what the caller must be granted, and the handler that does the
// rest. The dispatcher names the operation and authorizes the caller before
// serve runs.
type op struct {
	name   string
	access auth.Access
	serve  func(*handler, *req) error
}

// Levels of a Queue request's path.
const (
	serviceLevel  = iota // the account
	queueLevel           // /queue
	messagesLevel        // /queue/messages
	messageLevel         // /queue/messages/id
)

// Access rules shared by several operations.
var (
	serviceRead = auth.Access{Resource: auth.ResService, Perms: "r", AccountPerms: "r", ServiceSASDenied: true}
	// Queue ACLs are for the account owner.
	ownerRead  = auth.Access{Resource: auth.ResContainer, AccountPerms: "r", ServiceSASDenied: true, AccountSASDenied: true}
	ownerWrite = auth.Access{Resource: auth.ResContainer, AccountPerms: "w", ServiceSASDenied: true, AccountSASDenied: true}
)

// on is one row of the operation table.
var on = httpx.On[op]

// routes is every Queue operation.
var routes = httpx.NewRouter([]httpx.Route[op]{
	on(serviceLevel, "*", "list", "GET", nil, op{"ListQueues", auth.Access{Resource: auth.ResService, Perms: "l", AccountPerms: "l", ServiceSASDenied: true}, (*handler).listQueues}),
	on(serviceLevel, "service", "properties", "GET", nil, op{"GetQueueServiceProperties", serviceRead, (*handler).getServiceProperties}),
	on(serviceLevel, "service", "properties", "PUT", nil, op{"SetQueueServiceProperties", auth.Access{Resource: auth.ResService, Perms: "w", AccountPerms: "w", ServiceSASDenied: true}, (*handler).setServiceProperties}),
	on(serviceLevel, "service", "stats", "GET", nil, op{"GetQueueServiceStats", serviceRead, (*handler).getServiceStats}),

	on(queueLevel, "*", "", "PUT", nil, op{"CreateQueue", auth.Access{Resource: auth.ResContainer, AccountPerms: "cw", ServiceSASDenied: true}, (*handler).createQueue}),
	on(queueLevel, "*", "", "DELETE", nil, op{"DeleteQueue", auth.Access{Resource: auth.ResContainer, AccountPerms: "d", ServiceSASDenied: true}, (*handler).deleteQueue}),
	on(queueLevel, "*", "metadata", "GET HEAD", nil, op{"GetQueueMetadata", auth.Access{Resource: auth.ResContainer, Perms: "r", AccountPerms: "r"}, (*handler).getQueueMetadata}),
	// An account SAS with w sets queue metadata; a service SAS cannot.
	on(queueLevel, "*", "metadata", "PUT", nil, op{"SetQueueMetadata", auth.Access{Resource: auth.ResContainer, AccountPerms: "w", ServiceSASDenied: true}, (*handler).setQueueMetadata}),
	on(queueLevel, "*", "acl", "GET HEAD", nil, op{"GetQueueACL", ownerRead, (*handler).getQueueACL}),
	on(queueLevel, "*", "acl", "PUT", nil, op{"SetQueueACL", ownerWrite, (*handler).setQueueACL}),

	on(messagesLevel, "*", "*", "POST", nil, op{"PutMessage", auth.Access{Resource: auth.ResObject, Perms: "a", AccountPerms: "a"}, (*handler).putMessage}),
	on(messagesLevel, "*", "*", "GET", peekOnly, op{"PeekMessages", auth.Access{Resource: auth.ResObject, Perms: "r", AccountPerms: "r"}, (*handler).peekMessages}),
	on(messagesLevel, "*", "*", "GET", nil, op{"GetMessages", auth.Access{Resource: auth.ResObject, Perms: "p", AccountPerms: "p"}, (*handler).getMessages}),
	on(messagesLevel, "*", "*", "DELETE", nil, op{"ClearMessages", auth.Access{Resource: auth.ResObject, AccountPerms: "d", ServiceSASDenied: true}, (*handler).clearMessages}),

	on(messageLevel, "*", "*", "DELETE", nil, op{"DeleteMessage", auth.Access{Resource: auth.ResObject, Perms: "p", AccountPerms: "p"}, (*handler).deleteMessage}),
	on(messageLevel, "*", "*", "PUT", nil, op{"UpdateMessage", auth.Access{Resource: auth.ResObject, Perms: "u", AccountPerms: "u"}, (*handler).updateMessage}),
})

// peekOnly is Peek Messages: Get Messages with peekonly=true.
func peekOnly(r *http.Request) bool {
	return strings.EqualFold(r.URL.Query().Get("peekonly"), "true")
}

// route runs the operation the request asks for: it names it, checks the
// caller's access and calls its handler.
func (h *handler) route(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	segs, err := segments(info.Path)
	if err != nil {
		return err
	}
	rq := &req{w: w, r: r, info: info, q: r.URL.Query()}
	lv := serviceLevel
	if len(segs) > 0 {
		rq.name = segs[0]
		if err := validateQueueName(rq.name); err != nil {
			return err
		}
		switch {
		case len(segs) == 1:
			lv = queueLevel
		case len(segs) == 2 && segs[1] == "messages":
			lv = messagesLevel
		case len(segs) == 3 && segs[1] == "messages":
			lv, rq.id = messageLevel, segs[2]
		default:
			return azerr.New(azerr.InvalidUri)
		}
	}
	comp := rq.q.Get("comp")
	if lv == messagesLevel && r.Method == http.MethodGet {
		// Anything but a boolean must not fall through to a dequeue that
		// hides messages.
		if peek := rq.q.Get("peekonly"); peek != "" && !strings.EqualFold(peek, "true") && !strings.EqualFold(peek, "false") {
			return azerr.InvalidQuery("peekonly", peek, "")
		}
	}
	o, otherVerb := routes.Find(r, r.Method, lv, rq.q.Get("restype"), comp)
	if o == nil {
		if otherVerb {
			return azerr.New(azerr.UnsupportedHttpVerb)
		}
		return azerr.InvalidQuery("comp", comp, "")
	}
	if err := info.SetOperation(r.Context(), o.name); err != nil {
		return err
	}
	if h.d.Auth != nil {
		a := o.access
		a.Service = auth.Queue
		if rq.name != "" {
			a.Container = rq.name
			a.Policy = h.policyLookup(r.Context(), info.Account, rq.name)
		}
		if err := h.d.Auth.Authorize(info.Identity, r, a); err != nil {
			return err
		}
	}
	return o.serve(h, rq)
}
