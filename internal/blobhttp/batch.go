package blobhttp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/guid"
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
	rq.info.Operation = "BlobBatch"
	res := auth.ResService
	if rq.container != "" {
		res = auth.ResContainer
	}
	if err := h.authorize(rq, auth.Access{Resource: res, Perms: "dw", AccountPerms: "dw"}); err != nil {
		return err
	}
	ct := rq.r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.EqualFold(mt, "multipart/mixed") || params["boundary"] == "" {
		return azerr.InvalidHeader("Content-Type", ct)
	}
	raw, err := readBody(rq, 4<<20)
	if err != nil {
		return err
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	type sub struct {
		id  string
		req *http.Request
	}
	var subs []sub
	kind := ""
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return azerr.Newf("InvalidInput", "The batch request body is not valid multipart content.")
		}
		sr, err := http.ReadRequest(bufio.NewReader(part))
		if err != nil {
			return azerr.Newf("InvalidInput", "A batch sub-request is not a valid HTTP request.")
		}
		k := ""
		switch {
		case sr.Method == http.MethodDelete:
			k = "delete"
		case sr.Method == http.MethodPut && sr.URL.Query().Get("comp") == "tier":
			k = "tier"
		default:
			return azerr.Newf("InvalidInput", "Batch sub-requests may only be Delete Blob or Set Blob Tier.")
		}
		if kind != "" && k != kind {
			return azerr.Newf("InvalidInput", "All batch sub-requests must be the same operation.")
		}
		kind = k
		subs = append(subs, sub{id: part.Header.Get("Content-Id"), req: sr})
		if len(subs) > MaxBatchRequests {
			return azerr.Newf("InvalidInput", "A batch may carry at most %d sub-requests.", MaxBatchRequests)
		}
	}
	if len(subs) == 0 {
		return azerr.Newf("InvalidInput", "The batch request has no sub-requests.")
	}
	boundary := "batchresponse_" + guid.NewString()
	var out bytes.Buffer
	mw := multipart.NewWriter(&out)
	mw.SetBoundary(boundary)
	for _, s := range subs {
		sr := s.req
		u := &url.URL{Scheme: "http", Host: rq.r.Host, Path: sr.URL.Path, RawPath: sr.URL.RawPath, RawQuery: sr.URL.RawQuery}
		sr.URL, sr.Host, sr.RemoteAddr, sr.RequestURI = u, rq.r.Host, rq.r.RemoteAddr, ""
		sr.TLS = rq.r.TLS
		sr.Body, sr.ContentLength = http.NoBody, 0
		sr = sr.WithContext(rq.ctx())
		rec := &subRecorder{header: http.Header{}}
		h.sub.ServeHTTP(rec, sr)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		ph := textproto.MIMEHeader{"Content-Type": {"application/http"}}
		if s.id != "" {
			ph.Set("Content-Id", s.id)
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
			for _, v := range rec.header[k] {
				fmt.Fprintf(pw, "%s: %s\r\n", k, v)
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
