package admin

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/faults"
)

// faultRoutes serves the fault rules: POST /faults adds one rule (a JSON
// object) or several (an array), GET /faults lists them with what is
// left of each, DELETE /faults removes them all.
func faultRoutes(mux *http.ServeMux, set *faults.Set) {
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, set.List())
	})
	mux.HandleFunc("DELETE /faults", func(w http.ResponseWriter, r *http.Request) {
		set.Clear()
		writeJSON(w, http.StatusOK, set.List())
	})
	mux.HandleFunc("POST /faults", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, problem{"body: " + err.Error()})
			return
		}
		var rules []faults.Rule
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
			err = strictJSON(t, &rules)
		} else {
			var one faults.Rule
			err = strictJSON(t, &one)
			rules = append(rules, one)
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, problem{"body: " + err.Error()})
			return
		}
		// Validate every rule before any is in force.
		var check faults.Set
		for _, rule := range rules {
			if _, err := check.Add(rule); err != nil {
				writeJSON(w, http.StatusBadRequest, problem{err.Error()})
				return
			}
		}
		for _, rule := range rules {
			set.Add(rule)
		}
		writeJSON(w, http.StatusCreated, set.List())
	})
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
