// Package queuehttp is the HTTP surface of the Queue service: it decodes
// requests, runs the operation and encodes Azure's responses.
//
// It fits between httpx, whose wrapper has already resolved the account,
// authenticated the caller and set the common headers, and the domain
// package queue. Every operation is one row of the table in ops.go (path
// level, restype, comp, method -> operation name, required access,
// handler); the dispatcher names the operation and authorizes the caller
// before the handler runs. Query parameters are validated here (they carry
// the names Azure reports in OutOfRangeQueryParameterValue and
// InvalidQueryParameterValue details); every state check runs in the queue
// domain inside one transaction.
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

// New returns the Queue service handler over svc. The server runs svc's
// purges of deleted and cleared queues (queue.Service.Run).
func New(d httpx.Deps, svc *queue.Service) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
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
func (h *handler) listQueues(rq *req) error {
	max, hasMax, err := intParam(rq.q, "maxresults", queue.MaxListResults, 1, 2147483647)
	if err != nil {
		return err
	}
	prefix, marker := rq.q.Get("prefix"), rq.q.Get("marker")
	start := marker
	// Markers are "/<account>/<queue>"; a bare queue name is accepted too.
	if rest, ok := strings.CutPrefix(marker, "/"+rq.info.Account+"/"); ok {
		start = rest
	}
	withMeta := false
	for _, inc := range splitList(rq.q.Get("include")) {
		if inc != "metadata" {
			return azerr.InvalidQuery("include", rq.q.Get("include"), "")
		}
		withMeta = true
	}
	items, next, err := h.svc.ListQueues(rq.r.Context(), rq.info.Account, prefix, start, int(min(max, queue.MaxListResults)))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`<EnumerationResults ServiceEndpoint="` + azerr.EscapeXML(h.d.BaseURL(rq.info.Account)+"/") + `">`)
	if rq.q.Has("prefix") {
		elem(&b, "Prefix", prefix)
	}
	if rq.q.Has("marker") {
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
		elem(&b, "NextMarker", "/"+rq.info.Account+"/"+next)
	}
	b.WriteString("</EnumerationResults>")
	writeXML(rq.w, rq.r, http.StatusOK, b.String())
	return nil
}

// getServiceProperties implements Get Queue Service Properties.
func (h *handler) getServiceProperties(rq *req) error {
	p, err := h.svc.GetServiceProperties(rq.r.Context(), rq.info.Account)
	if err != nil {
		return err
	}
	writeXML(rq.w, rq.r, http.StatusOK, renderServiceProperties(p))
	return nil
}

// setServiceProperties implements Set Queue Service Properties.
func (h *handler) setServiceProperties(rq *req) error {
	body, err := readBody(rq.r)
	if err != nil {
		return err
	}
	p, setCors, err := parseServiceProperties(body)
	if err != nil {
		return err
	}
	if err := h.svc.SetServiceProperties(rq.r.Context(), rq.info.Account, p, setCors); err != nil {
		return err
	}
	writeEmpty(rq.w, http.StatusAccepted)
	return nil
}

// getServiceStats implements Get Queue Service Stats. lazuli has no
// secondary, so replication is always live and synced now.
func (h *handler) getServiceStats(rq *req) error {
	writeXML(rq.w, rq.r, http.StatusOK, svcprops.RenderStats(h.d.Now()))
	return nil
}

// Queue operations.

// createQueue implements Create Queue: 201, or 204 when the same queue
// with identical metadata exists, 409 QueueAlreadyExists when it differs.
func (h *handler) createQueue(rq *req) error {
	md, err := parseMetadata(rq.r)
	if err != nil {
		return err
	}
	created, err := h.svc.CreateQueue(rq.r.Context(), rq.info.Account, rq.name, md)
	if err != nil {
		return err
	}
	if created {
		writeEmpty(rq.w, http.StatusCreated)
	} else {
		writeEmpty(rq.w, http.StatusNoContent)
	}
	return nil
}

// deleteQueue implements Delete Queue.
func (h *handler) deleteQueue(rq *req) error {
	if err := h.svc.DeleteQueue(rq.r.Context(), rq.info.Account, rq.name); err != nil {
		return err
	}
	writeEmpty(rq.w, http.StatusNoContent)
	return nil
}

// getQueueMetadata implements Get Queue Metadata (GET or HEAD).
func (h *handler) getQueueMetadata(rq *req) error {
	p, err := h.svc.GetQueueProperties(rq.r.Context(), rq.info.Account, rq.name)
	if err != nil {
		return err
	}
	setMetadataHeaders(rq.w, p.Metadata)
	rq.w.Header().Set("x-ms-approximate-messages-count", strconv.FormatInt(p.ApproximateMessageCount, 10))
	rq.w.Header().Set("Cache-Control", "no-cache")
	writeEmpty(rq.w, http.StatusOK)
	return nil
}

// setQueueMetadata implements Set Queue Metadata.
func (h *handler) setQueueMetadata(rq *req) error {
	md, err := parseMetadata(rq.r)
	if err != nil {
		return err
	}
	if err := h.svc.SetQueueMetadata(rq.r.Context(), rq.info.Account, rq.name, md); err != nil {
		return err
	}
	writeEmpty(rq.w, http.StatusNoContent)
	return nil
}

// getQueueACL implements Get Queue ACL (only the account owner may).
func (h *handler) getQueueACL(rq *req) error {
	acl, err := h.svc.GetQueueACL(rq.r.Context(), rq.info.Account, rq.name)
	if err != nil {
		return err
	}
	writeXML(rq.w, rq.r, http.StatusOK, renderACL(acl))
	return nil
}

// setQueueACL implements Set Queue ACL (only the account owner may).
func (h *handler) setQueueACL(rq *req) error {
	body, err := readBody(rq.r)
	if err != nil {
		return err
	}
	acl, err := parseACL(body)
	if err != nil {
		return err
	}
	if err := h.svc.SetQueueACL(rq.r.Context(), rq.info.Account, rq.name, acl); err != nil {
		return err
	}
	writeEmpty(rq.w, http.StatusNoContent)
	return nil
}

// Message operations.

// putMessage implements Put Message.
func (h *handler) putMessage(rq *req) error {
	vis, _, err := intParam(rq.q, "visibilitytimeout", 0, 0, maxVisibilitySeconds)
	if err != nil {
		return err
	}
	nm := queue.NewMessage{VisibilityTimeout: seconds(vis)}
	var ttl int64
	if rq.q.Has("messagettl") {
		s := rq.q.Get("messagettl")
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return azerr.InvalidQuery("messagettl", s, "")
		}
		if rq.info.Version < "2017-07-29" {
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
	if rq.q.Has("messagettl") && ttl != -1 && vis >= ttl {
		return azerr.InvalidQuery("visibilitytimeout", strconv.FormatInt(vis, 10), "messagettl must be greater than visibilitytimeout.")
	}
	body, err := readBody(rq.r)
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
	if limit := messageLimit(rq.info.Version); pm.RawLen > limit {
		return messageTooLarge(limit)
	}
	nm.Text = pm.Text
	m, err := h.svc.PutMessage(rq.r.Context(), rq.info.Account, rq.name, nm)
	if err != nil {
		return err
	}
	if rq.info.Version < "2016-05-31" {
		// Older versions answer Put Message without a body.
		writeEmpty(rq.w, http.StatusCreated)
		return nil
	}
	writeMessages(rq.w, rq.r, http.StatusCreated, []queue.Message{m}, false, true)
	return nil
}

// getMessages implements Get Messages.
func (h *handler) getMessages(rq *req) error {
	n, _, err := intParam(rq.q, "numofmessages", 1, 1, queue.MaxMessagesPerGet)
	if err != nil {
		return err
	}
	vis, _, err := intParam(rq.q, "visibilitytimeout", int64(queue.DefaultGetVisibility/time.Second), 1, maxVisibilitySeconds)
	if err != nil {
		return err
	}
	ms, err := h.svc.GetMessages(rq.r.Context(), rq.info.Account, rq.name, int(n), seconds(vis))
	if err != nil {
		return err
	}
	writeMessages(rq.w, rq.r, http.StatusOK, ms, false, false)
	return nil
}

// peekMessages implements Peek Messages.
func (h *handler) peekMessages(rq *req) error {
	n, _, err := intParam(rq.q, "numofmessages", 1, 1, queue.MaxMessagesPerGet)
	if err != nil {
		return err
	}
	ms, err := h.svc.PeekMessages(rq.r.Context(), rq.info.Account, rq.name, int(n))
	if err != nil {
		return err
	}
	writeMessages(rq.w, rq.r, http.StatusOK, ms, true, false)
	return nil
}

// clearMessages implements Clear Messages.
func (h *handler) clearMessages(rq *req) error {
	if err := h.svc.ClearMessages(rq.r.Context(), rq.info.Account, rq.name); err != nil {
		return err
	}
	writeEmpty(rq.w, http.StatusNoContent)
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
func (h *handler) deleteMessage(rq *req) error {
	id, idOK, receipt, err := messageTarget(rq.q, rq.id)
	if err != nil {
		return err
	}
	if !idOK {
		return h.unknownMessage(rq.r.Context(), rq.info.Account, rq.name)
	}
	if err := h.svc.DeleteMessage(rq.r.Context(), rq.info.Account, rq.name, id, receipt); err != nil {
		return err
	}
	writeEmpty(rq.w, http.StatusNoContent)
	return nil
}

// updateMessage implements Update Message.
func (h *handler) updateMessage(rq *req) error {
	id, idOK, receipt, err := messageTarget(rq.q, rq.id)
	if err != nil {
		return err
	}
	if !rq.q.Has("visibilitytimeout") {
		return azerr.New(azerr.MissingRequiredQueryParameter).WithDetail("QueryParameterName", "visibilitytimeout")
	}
	vis, _, err := intParam(rq.q, "visibilitytimeout", 0, 0, maxVisibilitySeconds)
	if err != nil {
		return err
	}
	body, err := readBody(rq.r)
	if err != nil {
		return err
	}
	pm, hasText, err := parseMessage(body)
	if err != nil {
		return err
	}
	if limit := messageLimit(rq.info.Version); hasText && pm.RawLen > limit {
		return messageTooLarge(limit)
	}
	if !idOK {
		return h.unknownMessage(rq.r.Context(), rq.info.Account, rq.name)
	}
	var text *string
	if hasText {
		text = &pm.Text
	}
	m, err := h.svc.UpdateMessage(rq.r.Context(), rq.info.Account, rq.name, id, receipt, text, seconds(vis))
	if err != nil {
		return err
	}
	rq.w.Header().Set("x-ms-popreceipt", m.PopReceipt)
	rq.w.Header().Set("x-ms-time-next-visible", fmtTime(m.TimeNextVisible))
	writeEmpty(rq.w, http.StatusNoContent)
	return nil
}
