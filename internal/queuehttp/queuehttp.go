// Package queuehttp is the HTTP surface of the Queue service: it decodes
// requests, runs the operation and encodes Azure's responses.
//
// Each operation handler names the REST operation it implements. Query
// parameters are validated here (they carry the names Azure reports in
// OutOfRangeQueryParameterValue and InvalidQueryParameterValue details);
// every state check runs in the queue domain inside one transaction.
package queuehttp

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/queue"
	"github.com/lazuli-storage/lazuli/internal/svcprops"
)

// maxBodySize bounds every request body read into memory. A Put or Update
// Message body beyond it, or whose MessageText is over 64 KiB, is 413
// RequestBodyTooLarge.
const maxBodySize = 1 << 20

const maxVisibilitySeconds = int64(queue.MaxVisibilityTimeout / time.Second)

type handler struct {
	d   httpx.Deps
	svc *queue.Service
}

// New returns the Queue service handler.
func New(d httpx.Deps) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	svc := queue.New(d.Engine, d.Now)
	// Purges deleted and cleared queues, including those an earlier
	// process left.
	d.StartWorker(svc.Run)
	return &handler{d: d, svc: svc}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info := httpx.FromContext(r.Context())
	var err error
	if r.Method == http.MethodOptions {
		err = h.preflight(w, r, info)
	} else {
		if r.Header.Get("Origin") != "" {
			h.corsHeaders(w, r, info.Account)
		}
		err = h.route(w, r, info)
	}
	if err != nil {
		httpx.WriteError(w, r, err)
	}
}

// segments splits the path after the account into unescaped segments; a
// trailing slash is ignored.
func segments(p string) ([]string, error) {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, azerr.New(azerr.InvalidUri)
		}
		parts[i] = u
	}
	return parts, nil
}

func unsupportedVerb() error { return azerr.New(azerr.UnsupportedHttpVerb) }

func (h *handler) route(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	segs, err := segments(info.Path)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	comp := q.Get("comp")
	switch len(segs) {
	case 0:
		switch {
		case comp == "list":
			if r.Method != http.MethodGet {
				return unsupportedVerb()
			}
			return h.listQueues(w, r, info, q)
		case comp == "properties" && q.Get("restype") == "service":
			switch r.Method {
			case http.MethodGet:
				return h.getServiceProperties(w, r, info)
			case http.MethodPut:
				return h.setServiceProperties(w, r, info)
			}
			return unsupportedVerb()
		case comp == "stats" && q.Get("restype") == "service":
			if r.Method != http.MethodGet {
				return unsupportedVerb()
			}
			return h.getServiceStats(w, r, info)
		}
		return azerr.InvalidQuery("comp", comp, "")
	}
	name := segs[0]
	if err := validateQueueName(name); err != nil {
		return err
	}
	switch {
	case len(segs) == 1:
		switch comp {
		case "":
			switch r.Method {
			case http.MethodPut:
				return h.createQueue(w, r, info, name)
			case http.MethodDelete:
				return h.deleteQueue(w, r, info, name)
			}
			return unsupportedVerb()
		case "metadata":
			switch r.Method {
			case http.MethodGet, http.MethodHead:
				return h.getQueueMetadata(w, r, info, name)
			case http.MethodPut:
				return h.setQueueMetadata(w, r, info, name)
			}
			return unsupportedVerb()
		case "acl":
			switch r.Method {
			case http.MethodGet, http.MethodHead:
				return h.getQueueACL(w, r, info, name)
			case http.MethodPut:
				return h.setQueueACL(w, r, info, name)
			}
			return unsupportedVerb()
		}
		return azerr.InvalidQuery("comp", comp, "")
	case len(segs) == 2 && segs[1] == "messages":
		switch r.Method {
		case http.MethodPost:
			return h.putMessage(w, r, info, name, q)
		case http.MethodGet:
			switch peek := q.Get("peekonly"); {
			case strings.EqualFold(peek, "true"):
				return h.peekMessages(w, r, info, name, q)
			case peek != "" && !strings.EqualFold(peek, "false"):
				// Anything but a boolean must not fall through to a
				// dequeue that hides messages.
				return azerr.InvalidQuery("peekonly", peek, "")
			}
			return h.getMessages(w, r, info, name, q)
		case http.MethodDelete:
			return h.clearMessages(w, r, info, name)
		}
		return unsupportedVerb()
	case len(segs) == 3 && segs[1] == "messages":
		switch r.Method {
		case http.MethodDelete:
			return h.deleteMessage(w, r, info, name, segs[2], q)
		case http.MethodPut:
			return h.updateMessage(w, r, info, name, segs[2], q)
		}
		return unsupportedVerb()
	}
	return azerr.New(azerr.InvalidUri)
}

// validateQueueName applies Azure's queue naming rules: 3-63 characters
// (400 OutOfRangeInput otherwise), lowercase letters, digits and single
// dashes, starting and ending with a letter or digit (400
// InvalidResourceName otherwise).
func validateQueueName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return azerr.Newf(azerr.OutOfRangeInput, "The specified resource name length is not within the permissible limits.")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 || name[i-1] == '-' {
				return azerr.New(azerr.InvalidResourceName)
			}
		default:
			return azerr.New(azerr.InvalidResourceName)
		}
	}
	return nil
}

// authorize runs the authorization check every operation makes first.
func (h *handler) authorize(r *http.Request, info *httpx.Info, need auth.Access) error {
	if h.d.Auth == nil {
		return nil
	}
	need.Service = auth.Queue
	return h.d.Auth.Authorize(info.Identity, r, need)
}

// policyLookup resolves a stored access policy of queue name for SAS
// requests with si.
func (h *handler) policyLookup(ctx context.Context, account, name string) func(string) (*auth.Policy, error) {
	return func(id string) (*auth.Policy, error) {
		si, err := h.svc.Policy(ctx, account, name, id)
		if err != nil || si == nil {
			return nil, err
		}
		return &auth.Policy{Start: si.Start, Expiry: si.Expiry, Permission: si.Permission}, nil
	}
}

// queueAccess is the Access of an operation on queue name.
func (h *handler) queueAccess(r *http.Request, info *httpx.Info, name string, res auth.ResourceType, perms, accountPerms string, sasDenied bool) auth.Access {
	return auth.Access{
		Resource: res, Perms: perms, AccountPerms: accountPerms, ServiceSASDenied: sasDenied,
		Container: name, Policy: h.policyLookup(r.Context(), info.Account, name),
	}
}

// Response writing.

// writeXML sends an XML document given without its declaration; queue
// answers are not cached.
func writeXML(w http.ResponseWriter, r *http.Request, status int, doc string) {
	w.Header().Set("Cache-Control", "no-cache")
	httpx.WriteXML(w, r, status, doc)
}

// writeMessages sends a QueueMessagesList as writeXML does, building the
// document, declaration included, in one buffer and the headers from one
// allocation.
func writeMessages(w http.ResponseWriter, r *http.Request, status int, ms []queue.Message, peek, put bool) {
	n := len(httpx.XMLDeclaration)
	for i := range ms {
		n += 320 + len(ms[i].Text)
	}
	doc := append(make([]byte, 0, n), httpx.XMLDeclaration...)
	doc = appendMessages(doc, ms, peek, put)
	vals := make([]string, 3)
	vals[0], vals[1], vals[2] = "no-cache", "application/xml", strconv.Itoa(len(doc))
	hd := w.Header()
	hd["Cache-Control"] = vals[0:1:1]
	hd["Content-Type"] = vals[1:2:2]
	hd["Content-Length"] = vals[2:3:3]
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(doc)
	}
}

func writeEmpty(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(status)
}

// readBody reads at most maxBodySize bytes of the request body.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	// A declared length over the bound is answered before the body comes.
	if r.ContentLength > maxBodySize {
		return nil, tooLarge()
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodySize+1))
	if err != nil {
		return nil, azerr.New(azerr.InvalidInput)
	}
	if len(b) > maxBodySize {
		return nil, tooLarge()
	}
	return b, nil
}

// tooLarge is Azure's answer to a message over 64 KiB: 413
// RequestBodyTooLarge with the limit as MaxLimit (the reference emulator
// answers the same; MessageTooLarge is listed but not what the service
// sends).
func tooLarge() error {
	return azerr.New(azerr.RequestBodyTooLarge).WithDetail("MaxLimit", strconv.Itoa(queue.MaxMessageSize))
}

// messageLimit is the largest message text a request's version allows:
// 64 KiB, or 8 KiB before 2011-08-18.
func messageLimit(version string) int {
	if version < "2011-08-18" {
		return 8 * 1024
	}
	return queue.MaxMessageSize
}

func messageTooLarge(limit int) error {
	return azerr.New(azerr.RequestBodyTooLarge).WithDetail("MaxLimit", strconv.Itoa(limit))
}

// intParam parses an optional integer query parameter. A value that is
// not an integer is 400 InvalidQueryParameterValue; one outside min..max
// is 400 OutOfRangeQueryParameterValue.
func intParam(q url.Values, name string, def, min, max int64) (int64, bool, error) {
	if !q.Has(name) {
		return def, false, nil
	}
	s := q.Get(name)
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, true, azerr.InvalidQuery(name, s, "")
	}
	if v < min || v > max {
		return 0, true, azerr.OutOfRangeQuery(name, s, min, max)
	}
	return v, true, nil
}

func seconds(v int64) time.Duration { return time.Duration(v) * time.Second }

// parseMetadata collects x-ms-meta-* headers: names must be C#
// identifiers, and names plus values may total 8 KiB.
func parseMetadata(r *http.Request) ([]queue.MetadataItem, error) {
	var md []queue.MetadataItem
	total := 0
	seen := map[string]bool{}
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "x-ms-meta-") {
			continue
		}
		name := lk[len("x-ms-meta-"):]
		if name == "" {
			return nil, azerr.New(azerr.EmptyMetadataKey)
		}
		if !validIdentifier(name) {
			return nil, azerr.New(azerr.InvalidMetadata).WithDetail("MetadataName", name)
		}
		if seen[name] {
			return nil, azerr.New(azerr.InvalidMetadata).WithDetail("MetadataName", name)
		}
		seen[name] = true
		v := strings.Join(vs, ",")
		total += len(name) + len(v)
		md = append(md, queue.MetadataItem{Name: name, Value: v})
	}
	if total > 8*1024 {
		return nil, azerr.New(azerr.MetadataTooLarge)
	}
	return md, nil
}

func validIdentifier(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return s != ""
}

func setMetadataHeaders(w http.ResponseWriter, md []queue.MetadataItem) {
	hd := w.Header()
	for _, m := range md {
		hd.Set("x-ms-meta-"+m.Name, m.Value)
	}
}

// Service operations.

// listQueues implements List Queues.
func (h *handler) listQueues(w http.ResponseWriter, r *http.Request, info *httpx.Info, q url.Values) error {
	info.Operation = "ListQueues"
	if err := h.authorize(r, info, auth.Access{Resource: auth.ResService, Perms: "l", AccountPerms: "l", ServiceSASDenied: true}); err != nil {
		return err
	}
	max, hasMax, err := intParam(q, "maxresults", queue.MaxListResults, 1, 2147483647)
	if err != nil {
		return err
	}
	prefix, marker := q.Get("prefix"), q.Get("marker")
	start := marker
	// Markers are "/<account>/<queue>"; a bare queue name is accepted too.
	if rest, ok := strings.CutPrefix(marker, "/"+info.Account+"/"); ok {
		start = rest
	}
	withMeta := false
	for _, inc := range splitList(q.Get("include")) {
		if inc != "metadata" {
			return azerr.InvalidQuery("include", q.Get("include"), "")
		}
		withMeta = true
	}
	items, next, err := h.svc.ListQueues(r.Context(), info.Account, prefix, start, int(min(max, queue.MaxListResults)))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`<EnumerationResults ServiceEndpoint="` + azerr.EscapeXML(h.d.BaseURL(info.Account)+"/") + `">`)
	if q.Has("prefix") {
		elem(&b, "Prefix", prefix)
	}
	if q.Has("marker") {
		elem(&b, "Marker", marker)
	}
	if hasMax {
		elem(&b, "MaxResults", strconv.FormatInt(max, 10))
	}
	if len(items) == 0 {
		b.WriteString("<Queues />")
	} else {
		b.WriteString("<Queues>")
		for _, it := range items {
			b.WriteString("<Queue>")
			elem(&b, "Name", it.Name)
			if withMeta {
				if len(it.Metadata) == 0 {
					b.WriteString("<Metadata />")
				} else {
					b.WriteString("<Metadata>")
					for _, m := range it.Metadata {
						elem(&b, m.Name, m.Value)
					}
					b.WriteString("</Metadata>")
				}
			}
			b.WriteString("</Queue>")
		}
		b.WriteString("</Queues>")
	}
	if next == "" {
		b.WriteString("<NextMarker />")
	} else {
		elem(&b, "NextMarker", "/"+info.Account+"/"+next)
	}
	b.WriteString("</EnumerationResults>")
	writeXML(w, r, http.StatusOK, b.String())
	return nil
}

// getServiceProperties implements Get Queue Service Properties.
func (h *handler) getServiceProperties(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	info.Operation = "GetQueueServiceProperties"
	if err := h.authorize(r, info, auth.Access{Resource: auth.ResService, Perms: "r", AccountPerms: "r", ServiceSASDenied: true}); err != nil {
		return err
	}
	p, err := h.svc.GetServiceProperties(r.Context(), info.Account)
	if err != nil {
		return err
	}
	writeXML(w, r, http.StatusOK, renderServiceProperties(p))
	return nil
}

// setServiceProperties implements Set Queue Service Properties.
func (h *handler) setServiceProperties(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	info.Operation = "SetQueueServiceProperties"
	if err := h.authorize(r, info, auth.Access{Resource: auth.ResService, Perms: "w", AccountPerms: "w", ServiceSASDenied: true}); err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	p, setCors, err := parseServiceProperties(body)
	if err != nil {
		return err
	}
	if err := h.svc.SetServiceProperties(r.Context(), info.Account, p, setCors); err != nil {
		return err
	}
	writeEmpty(w, http.StatusAccepted)
	return nil
}

// getServiceStats implements Get Queue Service Stats. lazuli has no
// secondary, so replication is always live and synced now.
func (h *handler) getServiceStats(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	info.Operation = "GetQueueServiceStats"
	if err := h.authorize(r, info, auth.Access{Resource: auth.ResService, Perms: "r", AccountPerms: "r", ServiceSASDenied: true}); err != nil {
		return err
	}
	writeXML(w, r, http.StatusOK, svcprops.RenderStats(h.d.Now()))
	return nil
}

// Queue operations.

// createQueue implements Create Queue: 201, or 204 when the same queue
// with identical metadata exists, 409 QueueAlreadyExists when it differs.
func (h *handler) createQueue(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string) error {
	info.Operation = "CreateQueue"
	if err := h.authorize(r, info, h.queueAccess(r, info, name, auth.ResContainer, "", "cw", true)); err != nil {
		return err
	}
	md, err := parseMetadata(r)
	if err != nil {
		return err
	}
	created, err := h.svc.CreateQueue(r.Context(), info.Account, name, md)
	if err != nil {
		return err
	}
	if created {
		writeEmpty(w, http.StatusCreated)
	} else {
		writeEmpty(w, http.StatusNoContent)
	}
	return nil
}

// deleteQueue implements Delete Queue.
func (h *handler) deleteQueue(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string) error {
	info.Operation = "DeleteQueue"
	if err := h.authorize(r, info, h.queueAccess(r, info, name, auth.ResContainer, "", "d", true)); err != nil {
		return err
	}
	if err := h.svc.DeleteQueue(r.Context(), info.Account, name); err != nil {
		return err
	}
	writeEmpty(w, http.StatusNoContent)
	return nil
}

// getQueueMetadata implements Get Queue Metadata (GET or HEAD).
func (h *handler) getQueueMetadata(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string) error {
	info.Operation = "GetQueueMetadata"
	if err := h.authorize(r, info, h.queueAccess(r, info, name, auth.ResContainer, "r", "r", false)); err != nil {
		return err
	}
	p, err := h.svc.GetQueueProperties(r.Context(), info.Account, name)
	if err != nil {
		return err
	}
	setMetadataHeaders(w, p.Metadata)
	w.Header().Set("x-ms-approximate-messages-count", strconv.FormatInt(p.ApproximateMessageCount, 10))
	w.Header().Set("Cache-Control", "no-cache")
	writeEmpty(w, http.StatusOK)
	return nil
}

// setQueueMetadata implements Set Queue Metadata.
func (h *handler) setQueueMetadata(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string) error {
	info.Operation = "SetQueueMetadata"
	a := h.queueAccess(r, info, name, auth.ResContainer, "", "w", true)
	a.AccountSASDenied = true
	if err := h.authorize(r, info, a); err != nil {
		return err
	}
	md, err := parseMetadata(r)
	if err != nil {
		return err
	}
	if err := h.svc.SetQueueMetadata(r.Context(), info.Account, name, md); err != nil {
		return err
	}
	writeEmpty(w, http.StatusNoContent)
	return nil
}

// getQueueACL implements Get Queue ACL (only the account owner may).
func (h *handler) getQueueACL(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string) error {
	info.Operation = "GetQueueACL"
	a := h.queueAccess(r, info, name, auth.ResContainer, "", "r", true)
	a.AccountSASDenied = true
	if err := h.authorize(r, info, a); err != nil {
		return err
	}
	acl, err := h.svc.GetQueueACL(r.Context(), info.Account, name)
	if err != nil {
		return err
	}
	writeXML(w, r, http.StatusOK, renderACL(acl))
	return nil
}

// setQueueACL implements Set Queue ACL (only the account owner may).
func (h *handler) setQueueACL(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string) error {
	info.Operation = "SetQueueACL"
	a := h.queueAccess(r, info, name, auth.ResContainer, "", "w", true)
	a.AccountSASDenied = true
	if err := h.authorize(r, info, a); err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	acl, err := parseACL(body)
	if err != nil {
		return err
	}
	if err := h.svc.SetQueueACL(r.Context(), info.Account, name, acl); err != nil {
		return err
	}
	writeEmpty(w, http.StatusNoContent)
	return nil
}

// Message operations.

// putMessage implements Put Message.
func (h *handler) putMessage(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string, q url.Values) error {
	info.Operation = "PutMessage"
	if err := h.authorize(r, info, h.queueAccess(r, info, name, auth.ResObject, "a", "a", false)); err != nil {
		return err
	}
	vis, _, err := intParam(q, "visibilitytimeout", 0, 0, maxVisibilitySeconds)
	if err != nil {
		return err
	}
	nm := queue.NewMessage{VisibilityTimeout: seconds(vis)}
	var ttl int64
	if q.Has("messagettl") {
		s := q.Get("messagettl")
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return azerr.InvalidQuery("messagettl", s, "")
		}
		if info.Version < "2017-07-29" {
			// Before 2017-07-29 the TTL was capped at 7 days and -1 did
			// not exist.
			if v < 1 || v > maxVisibilitySeconds {
				return azerr.OutOfRangeQuery("messagettl", s, 1, maxVisibilitySeconds)
			}
		} else if v < 1 && v != -1 {
			return azerr.InvalidQuery("messagettl", s, "Value must be greater than or equal to 1, or -1 to indicate an infinite TTL.")
		}
		ttl = v
		if v == -1 {
			nm.TTL = -1
		} else {
			nm.TTL = seconds(min(v, int64(1<<62)/int64(time.Second)))
		}
	}
	// Like the reference emulator, only an explicit messagettl is checked
	// against the visibility timeout: with the default TTL a 7-day delay is
	// accepted.
	if q.Has("messagettl") && ttl != -1 && vis >= ttl {
		return azerr.InvalidQuery("visibilitytimeout", strconv.FormatInt(vis, 10), "messagettl must be greater than visibilitytimeout.")
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	pm, ok, err := parseMessage(body)
	if err != nil {
		return err
	}
	if !ok {
		return errBadXML()
	}
	if limit := messageLimit(info.Version); pm.RawLen > limit {
		return messageTooLarge(limit)
	}
	nm.Text = pm.Text
	m, err := h.svc.PutMessage(r.Context(), info.Account, name, nm)
	if err != nil {
		return err
	}
	if info.Version < "2016-05-31" {
		// Older versions answer Put Message without a body.
		writeEmpty(w, http.StatusCreated)
		return nil
	}
	writeMessages(w, r, http.StatusCreated, []queue.Message{m}, false, true)
	return nil
}

// getMessages implements Get Messages.
func (h *handler) getMessages(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string, q url.Values) error {
	info.Operation = "GetMessages"
	if err := h.authorize(r, info, h.queueAccess(r, info, name, auth.ResObject, "p", "p", false)); err != nil {
		return err
	}
	n, _, err := intParam(q, "numofmessages", 1, 1, queue.MaxMessagesPerGet)
	if err != nil {
		return err
	}
	vis, _, err := intParam(q, "visibilitytimeout", int64(queue.DefaultGetVisibility/time.Second), 1, maxVisibilitySeconds)
	if err != nil {
		return err
	}
	ms, err := h.svc.GetMessages(r.Context(), info.Account, name, int(n), seconds(vis))
	if err != nil {
		return err
	}
	writeMessages(w, r, http.StatusOK, ms, false, false)
	return nil
}

// peekMessages implements Peek Messages.
func (h *handler) peekMessages(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string, q url.Values) error {
	info.Operation = "PeekMessages"
	if err := h.authorize(r, info, h.queueAccess(r, info, name, auth.ResObject, "r", "r", false)); err != nil {
		return err
	}
	n, _, err := intParam(q, "numofmessages", 1, 1, queue.MaxMessagesPerGet)
	if err != nil {
		return err
	}
	ms, err := h.svc.PeekMessages(r.Context(), info.Account, name, int(n))
	if err != nil {
		return err
	}
	writeMessages(w, r, http.StatusOK, ms, true, false)
	return nil
}

// clearMessages implements Clear Messages.
func (h *handler) clearMessages(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string) error {
	info.Operation = "ClearMessages"
	if err := h.authorize(r, info, h.queueAccess(r, info, name, auth.ResObject, "", "d", true)); err != nil {
		return err
	}
	if err := h.svc.ClearMessages(r.Context(), info.Account, name); err != nil {
		return err
	}
	writeEmpty(w, http.StatusNoContent)
	return nil
}

// messageTarget validates the message id and pop receipt of Delete and
// Update Message. A missing receipt is 400 MissingRequiredQueryParameter,
// a malformed one 400 InvalidQueryParameterValue; an id that is not a GUID
// names no message (404 MessageNotFound, checked after the queue).
func messageTarget(q url.Values, rawID string) (id queue.MessageID, idOK bool, receipt string, err error) {
	if !q.Has("popreceipt") {
		return id, false, "", azerr.New(azerr.MissingRequiredQueryParameter).WithDetail("QueryParameterName", "popreceipt")
	}
	receipt = q.Get("popreceipt")
	if !queue.ValidPopReceipt(receipt) {
		return id, false, "", azerr.InvalidQuery("popreceipt", receipt, "invalid receipt format")
	}
	id, idOK = queue.ParseMessageID(rawID)
	return id, idOK, receipt, nil
}

// unknownMessage answers an id that cannot exist: QueueNotFound if the
// queue is missing, else MessageNotFound.
func (h *handler) unknownMessage(ctx context.Context, account, name string) error {
	if _, err := h.svc.GetQueueProperties(ctx, account, name); err != nil {
		return err
	}
	return azerr.New(azerr.MessageNotFound)
}

// deleteMessage implements Delete Message.
func (h *handler) deleteMessage(w http.ResponseWriter, r *http.Request, info *httpx.Info, name, rawID string, q url.Values) error {
	info.Operation = "DeleteMessage"
	if err := h.authorize(r, info, h.queueAccess(r, info, name, auth.ResObject, "p", "dp", false)); err != nil {
		return err
	}
	id, idOK, receipt, err := messageTarget(q, rawID)
	if err != nil {
		return err
	}
	if !idOK {
		return h.unknownMessage(r.Context(), info.Account, name)
	}
	if err := h.svc.DeleteMessage(r.Context(), info.Account, name, id, receipt); err != nil {
		return err
	}
	writeEmpty(w, http.StatusNoContent)
	return nil
}

// updateMessage implements Update Message.
func (h *handler) updateMessage(w http.ResponseWriter, r *http.Request, info *httpx.Info, name, rawID string, q url.Values) error {
	info.Operation = "UpdateMessage"
	if err := h.authorize(r, info, h.queueAccess(r, info, name, auth.ResObject, "u", "u", false)); err != nil {
		return err
	}
	id, idOK, receipt, err := messageTarget(q, rawID)
	if err != nil {
		return err
	}
	if !q.Has("visibilitytimeout") {
		return azerr.New(azerr.MissingRequiredQueryParameter).WithDetail("QueryParameterName", "visibilitytimeout")
	}
	vis, _, err := intParam(q, "visibilitytimeout", 0, 0, maxVisibilitySeconds)
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	pm, hasText, err := parseMessage(body)
	if err != nil {
		return err
	}
	if limit := messageLimit(info.Version); hasText && pm.RawLen > limit {
		return messageTooLarge(limit)
	}
	if !idOK {
		return h.unknownMessage(r.Context(), info.Account, name)
	}
	var text *string
	if hasText {
		text = &pm.Text
	}
	m, err := h.svc.UpdateMessage(r.Context(), info.Account, name, id, receipt, text, seconds(vis))
	if err != nil {
		return err
	}
	w.Header().Set("x-ms-popreceipt", m.PopReceipt)
	w.Header().Set("x-ms-time-next-visible", fmtTime(m.TimeNextVisible))
	writeEmpty(w, http.StatusNoContent)
	return nil
}
