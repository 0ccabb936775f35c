package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Clock is the server's clock as tests steer it: lazuli time is real time
// plus an offset, which Advance and Set move and Reset clears. Every
// instance sharing a database follows one offset.
type Clock interface {
	Now() time.Time
	Offset() time.Duration
	Advance(ctx context.Context, d time.Duration) error
	Set(ctx context.Context, t time.Time) error
	Reset(ctx context.Context) error
}

// clockState is the body of every /clock answer.
type clockState struct {
	Now    string `json:"now"`
	Offset string `json:"offset"`
	// OffsetMs is Offset in milliseconds, for scripts.
	OffsetMs int64 `json:"offsetMs"`
}

func clockRoutes(mux *http.ServeMux, c Clock) {
	state := func(w http.ResponseWriter) {
		off := c.Offset()
		writeJSON(w, http.StatusOK, clockState{Now: c.Now().UTC().Format(time.RFC3339Nano), Offset: off.String(), OffsetMs: off.Milliseconds()})
	}
	mux.HandleFunc("GET /clock", func(w http.ResponseWriter, r *http.Request) { state(w) })
	mux.HandleFunc("DELETE /clock", func(w http.ResponseWriter, r *http.Request) {
		if err := c.Reset(r.Context()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, problem{err.Error()})
			return
		}
		state(w)
	})
	mux.HandleFunc("POST /clock", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Advance string `json:"advance"`
			Set     string `json:"set"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, problem{"body: " + err.Error()})
			return
		}
		var err error
		switch {
		case (req.Advance == "") == (req.Set == ""):
			writeJSON(w, http.StatusBadRequest, problem{`give one of "advance" (a Go duration such as "20s" or "-1h") or "set" (an RFC 3339 time)`})
			return
		case req.Advance != "":
			d, perr := time.ParseDuration(req.Advance)
			if perr != nil {
				writeJSON(w, http.StatusBadRequest, problem{"advance: " + perr.Error()})
				return
			}
			err = c.Advance(r.Context(), d)
		default:
			t, perr := time.Parse(time.RFC3339Nano, req.Set)
			if perr != nil {
				writeJSON(w, http.StatusBadRequest, problem{"set: " + perr.Error()})
				return
			}
			err = c.Set(r.Context(), t)
		}
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, problem{err.Error()})
			return
		}
		state(w)
	})
}
