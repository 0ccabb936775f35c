package httpx

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/redact"
)

// WriteError renders err as the Azure error of the request's service: XML
// for Blob, Queue and File, OData JSON for Table. HEAD responses carry no
// body. Anything that is not an *azerr.Error becomes 500 InternalError and
// its cause is logged once.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	info := FromContext(r.Context())
	e, ok := azerr.As(err)
	if !ok {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			// The client went away; nobody reads this response.
			e = azerr.New(azerr.OperationTimedOut)
		} else if busy, ok := azerr.As(azerr.FromEngine(err)); ok {
			// A transient engine failure: the client may retry.
			e = busy
		} else {
			log := info.log
			if log == nil {
				log = slog.Default()
			}
			log.Error("internal error", "request_id", info.RequestID, "method", r.Method, "url", redact.String(r.URL.String()), "err", redact.String(err.Error()))
			e = azerr.New(azerr.InternalError)
		}
	}
	info.ErrorCode = e.Code.String()
	h := w.Header()
	for k, vs := range e.Header {
		h[k] = vs
	}
	h.Set("X-Ms-Error-Code", e.Code.String())
	now := info.Start
	if r.Method == http.MethodHead || e.Status == http.StatusNotModified {
		h.Del("Content-Type")
		w.WriteHeader(e.Status)
		return
	}
	if info.Service == auth.Table {
		ct := "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
		if a := r.Header.Get("Accept"); strings.Contains(a, "application/xml") && !strings.Contains(a, "json") {
			ct = "application/xml"
		}
		h.Set("Content-Type", ct)
		w.WriteHeader(e.Status)
		if ct == "application/xml" {
			azerr.WriteXML(w, e, info.RequestID, now)
			return
		}
		azerr.WriteJSON(w, e, info.RequestID, now, "")
		return
	}
	h.Set("Content-Type", "application/xml")
	w.WriteHeader(e.Status)
	azerr.WriteXML(w, e, info.RequestID, now)
}

// NotImplemented answers every request of a service whose operations do not
// exist yet with a proper Azure error.
func NotImplemented() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, azerr.New(azerr.NotImplemented))
	})
}
