package tablehttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/table"
)

// batchRequest is one operation of a changeset as sent on the wire.
type batchRequest struct {
	Method    string
	URL       string
	Header    http.Header
	Body      []byte
	ContentID string
}

// batchBody is a parsed $batch body: either one changeset of write
// operations, or one query request outside any changeset.
type batchBody struct {
	Changeset []batchRequest
	Query     *batchRequest
}

func malformedBatch(detail string) *azerr.Error {
	return azerr.Newf(azerr.InvalidInput, "The batch request body is malformed: %s.", detail)
}

// parseBatch parses an entity group transaction body: multipart/mixed
// holding one changeset (multipart/mixed of application/http parts) or a
// single application/http query part.
func parseBatch(contentType string, body []byte) (*batchBody, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.EqualFold(mt, "multipart/mixed") || params["boundary"] == "" {
		return nil, malformedBatch("the Content-Type must be multipart/mixed with a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	out := &batchBody{}
	parts := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, malformedBatch("the multipart body could not be read")
		}
		parts++
		if parts > 1 {
			return nil, malformedBatch("only one changeset or query is allowed per batch")
		}
		pbody, err := io.ReadAll(part)
		if err != nil {
			return nil, malformedBatch("a part could not be read")
		}
		pmt, pparams, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil {
			return nil, malformedBatch("a part has no valid Content-Type")
		}
		switch strings.ToLower(pmt) {
		case "multipart/mixed":
			if pparams["boundary"] == "" {
				return nil, malformedBatch("the changeset has no boundary")
			}
			cs, err := parseChangeset(pparams["boundary"], pbody)
			if err != nil {
				return nil, err
			}
			out.Changeset = cs
		case "application/http":
			req, err := parseHTTPPart(pbody)
			if err != nil {
				return nil, err
			}
			if req.Method != http.MethodGet {
				return nil, malformedBatch("a write operation must be inside a changeset")
			}
			req.ContentID = part.Header.Get("Content-ID")
			out.Query = req
		default:
			return nil, malformedBatch("unexpected part type " + pmt)
		}
	}
	if parts == 0 {
		return nil, malformedBatch("the batch is empty")
	}
	return out, nil
}

func parseChangeset(boundary string, body []byte) ([]batchRequest, error) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var out []batchRequest
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, malformedBatch("the changeset could not be read")
		}
		if len(out) > table.MaxBatchOperations {
			return nil, azerr.Newf(azerr.InvalidInput, "The batch request operation exceeds the maximum %d changes per change set.", table.MaxBatchOperations)
		}
		pmt, _, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil || !strings.EqualFold(pmt, "application/http") {
			return nil, malformedBatch("a changeset part must be application/http")
		}
		pbody, err := io.ReadAll(part)
		if err != nil {
			return nil, malformedBatch("a changeset part could not be read")
		}
		req, err := parseHTTPPart(pbody)
		if err != nil {
			return nil, err
		}
		if req.Method == http.MethodGet {
			return nil, malformedBatch("a query cannot be part of a changeset")
		}
		req.ContentID = part.Header.Get("Content-ID")
		if req.ContentID == "" {
			req.ContentID = req.Header.Get("Content-ID")
		}
		out = append(out, *req)
	}
}

// parseHTTPPart reads "METHOD URL HTTP/1.1", headers, a blank line and the
// body (the rest of the part).
func parseHTTPPart(b []byte) (*batchRequest, error) {
	br := bufio.NewReader(bytes.NewReader(b))
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	for err == nil && strings.TrimSpace(line) == "" {
		line, err = tp.ReadLine()
	}
	if err != nil {
		return nil, malformedBatch("an operation has no request line")
	}
	f := strings.Fields(line)
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/") {
		return nil, malformedBatch("an operation has an invalid request line")
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil && !(errors.Is(err, io.EOF) && len(hdr) >= 0) {
		return nil, malformedBatch("an operation has invalid headers")
	}
	rest, _ := io.ReadAll(br)
	return &batchRequest{Method: strings.ToUpper(f[0]), URL: f[1], Header: http.Header(hdr), Body: bytes.TrimRight(rest, "\r\n")}, nil
}

// batchOpTarget resolves an operation URL to its resource, after the
// account segment for path-style URLs.
func batchOpTarget(rawURL, account string) (*resource, url.Values, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, azerr.New(azerr.InvalidUri)
	}
	p := strings.TrimPrefix(u.EscapedPath(), "/")
	if seg, rest, ok := strings.Cut(p, "/"); ok && (seg == account || strings.TrimSuffix(seg, "-secondary") == account) {
		p = rest
	} else if !ok && p == account {
		p = ""
	}
	res, err := parseResource(p)
	if err != nil {
		return nil, nil, err
	}
	if res.tables {
		return nil, nil, azerr.Newf(azerr.InvalidInput, "Table operations are not allowed in a batch.")
	}
	return res, queryOf(u), nil
}

// Entity Group Transaction.
func (h *handler) batch(rq *req) error {
	body, err := readBody(rq.r, maxBatchBody)
	if err != nil {
		return err
	}
	bb, err := parseBatch(rq.r.Header.Get("Content-Type"), body)
	if err != nil {
		return err
	}
	if bb.Query != nil {
		return h.batchQuery(rq.w, rq.r, rq.info, bb.Query)
	}
	ops := make([]table.Op, 0, len(bb.Changeset))
	tableName := ""
	var prefs []bool
	var levels []metadata
	var failure *table.BatchError
	for i, br := range bb.Changeset {
		op, level, noContent, err := h.batchOp(rq.r, rq.info, &br, &tableName)
		if err != nil {
			failure = &table.BatchError{Index: i, Err: err}
			break
		}
		ops = append(ops, *op)
		prefs = append(prefs, noContent)
		levels = append(levels, level)
	}
	var results []*table.Entity
	if failure == nil {
		if len(ops) > 0 {
			results, err = h.svc.Batch(rq.r.Context(), rq.info.Account, tableName, ops)
		}
		if err != nil {
			var be *table.BatchError
			if !errors.As(err, &be) {
				return err
			}
			failure = be
		}
	}
	batchBoundary := "batchresponse_" + guid.NewString()
	csBoundary := "changesetresponse_" + guid.NewString()
	var b bytes.Buffer
	fmt.Fprintf(&b, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batchBoundary, csBoundary)
	base := h.d.BaseURL(rq.info.Account)
	if failure != nil {
		e, ok := azerr.As(azerr.FromEngine(failure.Err))
		if !ok {
			return failure.Err
		}
		rq.info.ErrorCode = e.Code.String()
		var eb bytes.Buffer
		azerr.WriteJSON(&eb, e, rq.info.RequestID, rq.info.Start, fmt.Sprintf("%d:", failure.Index))
		fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n", csBoundary)
		fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", e.Status, http.StatusText(e.Status))
		if failure.Index < len(bb.Changeset) && bb.Changeset[failure.Index].ContentID != "" {
			fmt.Fprintf(&b, "Content-ID: %s\r\n", bb.Changeset[failure.Index].ContentID)
		}
		fmt.Fprintf(&b, "X-Content-Type-Options: nosniff\r\nDataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n")
		b.Write(eb.Bytes())
		b.WriteString("\r\n")
	} else {
		for i, e := range results {
			br := &bb.Changeset[i]
			fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n", csBoundary)
			op := ops[i]
			withBody := op.Kind == table.OpInsert && !prefs[i]
			if withBody {
				b.WriteString("HTTP/1.1 201 Created\r\n")
			} else {
				b.WriteString("HTTP/1.1 204 No Content\r\n")
			}
			if br.ContentID != "" {
				fmt.Fprintf(&b, "Content-ID: %s\r\n", br.ContentID)
			}
			b.WriteString("X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n")
			if op.Kind == table.OpInsert {
				loc := base + "/" + editLink(tableName, op.PartitionKey, op.RowKey)
				if prefs[i] {
					b.WriteString("Preference-Applied: return-no-content\r\n")
				}
				fmt.Fprintf(&b, "Location: %s\r\nDataServiceId: %s\r\n", loc, loc)
			}
			if e != nil {
				fmt.Fprintf(&b, "ETag: %s\r\n", e.ETag())
			}
			if withBody {
				ew := &entityWriter{level: levels[i], baseURL: base, account: rq.info.Account, table: tableName}
				fmt.Fprintf(&b, "Content-Type: %s\r\n\r\n", levels[i].contentType())
				b.Write(ew.appendEntity(nil, e, true))
				b.WriteString("\r\n")
			} else {
				// End of headers, then the line break the part delimiter owns.
				b.WriteString("\r\n\r\n")
			}
		}
	}
	fmt.Fprintf(&b, "--%s--\r\n--%s--\r\n", csBoundary, batchBoundary)
	rq.w.Header().Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
	rq.w.Header().Set("Cache-Control", "no-cache")
	rq.w.Header().Set("X-Content-Type-Options", "nosniff")
	rq.w.Header().Set("DataServiceVersion", "3.0;")
	rq.w.WriteHeader(http.StatusAccepted)
	rq.w.Write(b.Bytes())
	return nil
}

// batchOp decodes and authorizes one changeset operation.
func (h *handler) batchOp(r *http.Request, info *httpx.Info, br *batchRequest, tableName *string) (*table.Op, metadata, bool, error) {
	res, q, err := batchOpTarget(br.URL, info.Account)
	if err != nil {
		return nil, 0, false, err
	}
	if *tableName == "" {
		*tableName = res.table
	} else if !strings.EqualFold(*tableName, res.table) {
		return nil, 0, false, azerr.New(azerr.CommandsInBatchActOnDifferentPartitions)
	}
	level, err := parseMetadata(q.Get("$format"), br.Header.Get("Accept"))
	if err != nil {
		return nil, 0, false, err
	}
	method := br.Method
	if xm := br.Header.Values("X-HTTP-Method"); len(xm) > 0 {
		if len(xm) > 1 {
			return nil, 0, false, azerr.New(azerr.XMethodIncorrectCount)
		}
		if method != http.MethodPost {
			return nil, 0, false, azerr.New(azerr.XMethodNotUsingPost)
		}
		method = strings.ToUpper(xm[0])
		switch method {
		case "MERGE", "PUT", "DELETE", "PATCH":
		default:
			return nil, 0, false, azerr.New(azerr.XMethodIncorrectValue)
		}
	}
	if method != http.MethodDelete {
		if err := checkJSONContentType(br.Header); err != nil {
			return nil, 0, false, err
		}
	}
	var op *table.Op
	switch {
	case method == http.MethodPost && !res.hasKeys:
		var ins table.Op
		if ins, err = insertOp(br.Body); err == nil {
			op = &ins
		}
	case res.hasKeys && !res.partial:
		op, err = entityOp(method, br.Header, res, func(decode func([]byte) error) error { return decode(br.Body) })
	default:
		err = azerr.New(azerr.MethodNotAllowed)
	}
	if err != nil {
		return nil, 0, false, err
	}
	// The SAS, if any, is on the $batch request itself.
	if err := h.authorizeWrite(r, info, res.table, op); err != nil {
		return nil, 0, false, err
	}
	noContent, _ := preferNoContent(&http.Request{Header: br.Header}, false)
	return op, level, noContent, nil
}

// batchQuery answers a batch holding a single point query.
func (h *handler) batchQuery(w http.ResponseWriter, r *http.Request, info *httpx.Info, br *batchRequest) error {
	res, q, err := batchOpTarget(br.URL, info.Account)
	if err != nil {
		return err
	}
	level, err := parseMetadata(q.Get("$format"), br.Header.Get("Accept"))
	if err != nil {
		return err
	}
	batchBoundary := "batchresponse_" + guid.NewString()
	var b bytes.Buffer
	fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n", batchBoundary)
	var e *table.Entity
	if !res.hasKeys || res.partial {
		err = azerr.Newf(azerr.InvalidInput, "Only a point query is allowed in a batch.")
	} else if err = h.authorize(r, info, entityAccess(res.table, res.pk, res.rk, "r", "r")); err == nil {
		e, err = h.svc.GetEntity(r.Context(), info.Account, res.table, res.pk, res.rk)
	}
	if err != nil {
		ae, ok := azerr.As(err)
		if !ok {
			return err
		}
		var eb bytes.Buffer
		azerr.WriteJSON(&eb, ae, info.RequestID, info.Start, "")
		fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n", ae.Status, http.StatusText(ae.Status))
		b.Write(eb.Bytes())
	} else {
		ew := &entityWriter{level: level, baseURL: h.d.BaseURL(info.Account), account: info.Account, table: res.table}
		fmt.Fprintf(&b, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nETag: %s\r\nDataServiceVersion: 3.0;\r\n\r\n", level.contentType(), e.ETag())
		b.Write(ew.appendEntity(nil, e, true))
	}
	fmt.Fprintf(&b, "\r\n--%s--\r\n", batchBoundary)
	w.Header().Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
	w.WriteHeader(http.StatusAccepted)
	w.Write(b.Bytes())
	return nil
}
