// Package table holds the Table service conformance tests: the official
// Azure SDK for Go (aztables) and raw HTTP requests against every target.
package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// MustTable creates a fresh table and returns its client.
func MustTable(t *testing.T, tg *harness.Target, prefix string) (*aztables.Client, string) {
	t.Helper()
	name := harness.UniqueTable(prefix)
	c := tg.Table(t).NewClient(name)
	if _, err := c.CreateTable(harness.Ctx(t), nil); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	return c, name
}

// MustAdd inserts an entity given as a map and returns its ETag.
func MustAdd(t *testing.T, c *aztables.Client, e map[string]any) azcore.ETag {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.AddEntity(harness.Ctx(t), b, nil)
	if err != nil {
		t.Fatalf("add entity %v: %v", e, err)
	}
	return resp.ETag
}

// MustGet reads an entity into a map (minimal metadata).
func MustGet(t *testing.T, c *aztables.Client, pk, rk string) (map[string]any, azcore.ETag) {
	t.Helper()
	resp, err := c.GetEntity(harness.Ctx(t), pk, rk, nil)
	if err != nil {
		t.Fatalf("get entity (%q,%q): %v", pk, rk, err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Value, &m); err != nil {
		t.Fatal(err)
	}
	return m, resp.ETag
}

// ErrorCode returns the Azure error code of an SDK error ("" if none).
func ErrorCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// StatusCode returns the HTTP status of an SDK error (0 if none).
func StatusCode(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// WantCode fails unless err is an Azure error with status and code.
func WantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %d %s, got success", status, code)
	}
	if StatusCode(err) != status || ErrorCode(err) != code {
		t.Fatalf("want %d %s, got %d %q: %v", status, code, StatusCode(err), ErrorCode(err), err)
	}
}

// Raw is a raw HTTP response with its body read.
type Raw struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map.
func (r *Raw) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

// Code returns the OData error code of an error body.
func (r *Raw) Code(t *testing.T) string {
	t.Helper()
	m := r.JSON(t)
	oe, _ := m["odata.error"].(map[string]any)
	code, _ := oe["code"].(string)
	return code
}

// Message returns the OData error message value.
func (r *Raw) Message(t *testing.T) string {
	t.Helper()
	m := r.JSON(t)
	oe, _ := m["odata.error"].(map[string]any)
	msg, _ := oe["message"].(map[string]any)
	v, _ := msg["value"].(string)
	return v
}

// Do sends a Shared Key signed request to the target's table endpoint;
// path is appended after the account ("Tables", "t(PartitionKey='a',...)").
func Do(t *testing.T, tg *harness.Target, method, path string, hdr map[string]string, body string) *Raw {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(harness.Ctx(t), method, tg.TableURL+"/"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	if err := sharedkey.Sign(req, tg.Account, tg.KeyBytes(), true); err != nil {
		t.Fatal(err)
	}
	resp, err := tg.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &Raw{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// MustStatus fails unless the raw response has the status (and, when code
// is not empty, the OData error code in body and header).
func MustStatus(t *testing.T, r *Raw, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
	if code != "" {
		if got := r.Code(t); got != code {
			t.Fatalf("code %q, want %q; body: %s", got, code, r.Body)
		}
		if got := r.Header.Get("x-ms-error-code"); got != code {
			t.Fatalf("x-ms-error-code %q, want %q", got, code)
		}
	}
}

// entityJSON marshals an entity map.
func entityJSON(t *testing.T, e map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// listAll pages through a query and returns the entities as maps.
func listAll(t *testing.T, c *aztables.Client, opts *aztables.ListEntitiesOptions) ([]map[string]any, int) {
	t.Helper()
	pager := c.NewListEntitiesPager(opts)
	var out []map[string]any
	pages := 0
	for pager.More() {
		page, err := pager.NextPage(harness.Ctx(t))
		if err != nil {
			t.Fatalf("list entities: %v", err)
		}
		pages++
		for _, raw := range page.Entities {
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out, pages
}

func ptr[T any](v T) *T { return &v }
