package blobhttp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// MaxBatchRequests is the most sub-requests one Blob Batch may carry.
const MaxBatchRequests = 256

// subRecorder captures the response of one batch sub-request.
type subRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (s *subRecorder) Header() http.Header { return s.header }
func (s *subRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.body.Write(b)
}
func (s *subRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}

// batch is Blob Batch (POST ?comp=batch on the service or a container): a
// multipart/mixed body of Delete Blob or Set Blob Tier sub-requests, each
// authenticated and run like a request of its own; the answer is 202 with
// one multipart part per sub-request, in order.
func (h *handler) batch(rq *req) error {
	ct := rq.r.Header.Get("Content-Type")
	boundary, mixed, dup := batchBoundary(ct)
	if !mixed {
		return azerr.InvalidHeader("Content-Type", ct)
	}
	if boundary == "" {
		// Azure accepts the request and answers its one part with the
		// error, as it does for a sub-request it cannot run: a boundary
		// given twice is InvalidInput, a missing one InvalidHeaderValue.
		_, err := readBody(rq, 4<<20)
		if err != nil {
			return err
		}
		rec := &subRecorder{header: http.Header{}}
		e := azerr.InvalidHeader("Content-Type", ct)
		if dup {
			e = azerr.Newf(azerr.InvalidInput, "The batch Content-Type names its boundary more than once.")
		}
		httpx.WriteError(rec, rq.r, e)
		return h.writeBatch(rq, []subResult{{rec: rec}})
	}
	raw, err := readBody(rq, 4<<20)
	if err != nil {
		return err
	}
	mr := multipart.NewReader(bytes.NewReader(raw), boundary)
	type sub struct {
		id  string
		req *http.Request
	}
	var subs []sub
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return azerr.Newf(azerr.InvalidInput, "The batch request body is not valid multipart content.")
		}
		text, err := io.ReadAll(part)
		if err != nil {
			return azerr.Newf(azerr.InvalidInput, "The batch request body is not valid multipart content.")
		}
		// A sub-request without a body may end right after its last
		// header line (the JavaScript SDK's framing): the CRLF that
		// would end the header block belongs to the next boundary.
		if !bytes.Contains(text, []byte("\r\n\r\n")) && !bytes.Contains(text, []byte("\n\n")) {
			text = append(text, "\r\n"...)
		}
		sr, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(text)))
		if err != nil {
			return azerr.Newf(azerr.InvalidInput, "A batch sub-request is not a valid HTTP request.")
		}
		// Delete Blob and Set Blob Tier only; the two may be mixed (the
		// SDKs build one kind per batch, the service runs each part on
		// its own).
		if sr.Method != http.MethodDelete && !(sr.Method == http.MethodPut && sr.URL.Query().Get("comp") == "tier") {
			return azerr.Newf(azerr.InvalidInput, "Batch sub-requests may only be Delete Blob or Set Blob Tier.")
		}
		subs = append(subs, sub{id: part.Header.Get("Content-Id"), req: sr})
		if len(subs) > MaxBatchRequests {
			return azerr.Newf(azerr.InvalidInput, "A batch may carry at most %d sub-requests.", MaxBatchRequests)
		}
	}
	if len(subs) == 0 {
		return azerr.Newf(azerr.InvalidInput, "The batch request has no sub-requests.")
	}
	// Sub-requests stay inside the account, and the container, the batch
	// is addressed to; each sub-request checks that once it is resolved
	// as a request of its own (see inBatchScope).
	scope := batchScope{account: rq.info.Account, container: rq.container}
	results := make([]subResult, 0, len(subs))
	for _, s := range subs {
		sr := s.req
		u := &url.URL{Scheme: "http", Host: rq.r.Host, Path: sr.URL.Path, RawPath: sr.URL.RawPath, RawQuery: sr.URL.RawQuery}
		sr.URL, sr.Host, sr.RemoteAddr, sr.RequestURI = u, rq.r.Host, rq.r.RemoteAddr, ""
		sr.TLS = rq.r.TLS
		sr.Body, sr.ContentLength = http.NoBody, 0
		sr = sr.WithContext(context.WithValue(rq.ctx(), batchScopeKey{}, scope))
		rec := &subRecorder{header: http.Header{}}
		h.sub.ServeHTTP(rec, sr)
		results = append(results, subResult{id: s.id, rec: rec})
	}
	return h.writeBatch(rq, results)
}

// batchScopeKey marks a batch sub-request's context with its batchScope.
type batchScopeKey struct{}

// batchScope is what a batch sub-request may reach: blobs of the batch's
// account and, for a batch addressed to a container, of that container.
type batchScope struct {
	account, container string
}

// inBatchScope refuses a batch sub-request that is not Delete Blob or Set
// Blob Tier on a blob inside the batch's scope (400 InvalidInput, in the
// sub-request's own part). It runs on the sub-request as resolved for
// itself (account, container, operation), so the check and the work
// cannot read the path differently.
func inBatchScope(rq *req, opName string) error {
	s, ok := rq.ctx().Value(batchScopeKey{}).(batchScope)
	if !ok {
		return nil
	}
	if (opName != "DeleteBlob" && opName != "SetBlobTier") || rq.info.Account != s.account ||
		(s.container != "" && rq.container != s.container) {
		return azerr.Newf(azerr.InvalidInput, "A batch sub-request must delete or set the tier of a blob in the account and container the batch is addressed to.")
	}
	return nil
}

// subResult is the answer to one sub-request and its Content-Id.
type subResult struct {
	id  string
	rec *subRecorder
}

// writeBatch sends the 202 multipart/mixed answer of a batch, one
// application/http part per sub-request.
func (h *handler) writeBatch(rq *req, results []subResult) error {
	boundary := "batchresponse_" + guid.NewString()
	var out bytes.Buffer
	mw := multipart.NewWriter(&out)
	mw.SetBoundary(boundary)
	for _, s := range results {
		rec := s.rec
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		// Spelled as Azure spells them: clients match "Content-ID" and
		// "x-ms-error-code" exactly (the JavaScript SDK does).
		ph := textproto.MIMEHeader{"Content-Type": {"application/http"}}
		if s.id != "" {
			ph["Content-ID"] = []string{s.id}
		}
		pw, err := mw.CreatePart(ph)
		if err != nil {
			return err
		}
		fmt.Fprintf(pw, "HTTP/1.1 %d %s\r\n", rec.status, http.StatusText(rec.status))
		keys := make([]string, 0, len(rec.header))
		for k := range rec.header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := k
			if len(k) > 5 && strings.EqualFold(k[:5], "x-ms-") {
				name = strings.ToLower(k)
			}
			for _, v := range rec.header[k] {
				fmt.Fprintf(pw, "%s: %s\r\n", name, v)
			}
		}
		io.WriteString(pw, "\r\n")
		pw.Write(rec.body.Bytes())
	}
	mw.Close()
	hd := rq.w.Header()
	hd.Set("Content-Type", "multipart/mixed; boundary="+boundary)
	rq.status(http.StatusAccepted)
	rq.w.Write(out.Bytes())
	return nil
}

// batchBoundary finds the boundary of a batch's multipart/mixed
// Content-Type the way Azure reads it: parameter names in any case,
// whitespace around names, "=" and values, and values quoted or bare (a
// bare value may itself contain "=", as Python's generated boundaries
// do). mixed reports whether ct is multipart/mixed at all; boundary is
// empty when it is missing, empty or given twice (dup).
func batchBoundary(ct string) (boundary string, mixed, dup bool) {
	parts := strings.Split(ct, ";")
	if !strings.EqualFold(strings.TrimSpace(parts[0]), "multipart/mixed") {
		return "", false, false
	}
	found := false
	for _, p := range parts[1:] {
		name, val, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "boundary") {
			continue
		}
		if found {
			return "", true, true
		}
		found = true
		val = strings.TrimSpace(val)
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		boundary = val
	}
	if len(boundary) > 70 {
		return "", true, false
	}
	return boundary, true, false
}
