package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// signed sends a Shared Key request to addr and returns the status and
// x-ms-error-code. With declared >= 0 the request says its body has that
// many bytes but sends none: the answer must come from the headers alone.
func signed(t *testing.T, addr, method, path string, table bool, hdr map[string]string, body string, declared int64) (int, string) {
	t.Helper()
	var rd io.Reader = strings.NewReader(body)
	pr, pw := io.Pipe()
	defer pw.Close()
	if declared >= 0 {
		rd = pr
	}
	req, _ := http.NewRequest(method, "http://"+addr+"/devstoreaccount1/"+path, rd)
	if declared >= 0 {
		req.ContentLength = declared
	}
	req.Header.Set("x-ms-version", "2025-11-05")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	if table {
		req.Header.Set("DataServiceVersion", "3.0")
		req.Header.Set("Accept", "application/json;odata=nometadata")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if err := sharedkey.Sign(req, auth.DevAccount, auth.DevelopmentAccount().Keys[0], table); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	go req.Write(c)
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("x-ms-error-code")
}

// Validation Azure does before it looks at a request's data: version ids
// and listing markers that do not parse, retention days outside 1..365,
// and a declared body larger than the operation allows, answered from the
// headers before any of the body is sent.
func TestValidationFromHeaders(t *testing.T) {
	s := startServer(t)
	blobAddr, queueAddr, tableAddr := s.Addr(auth.Blob), s.Addr(auth.Queue), s.Addr(auth.Table)
	want := func(what string, status int, code string, gotStatus int, gotCode string) {
		t.Helper()
		if gotStatus != status || gotCode != code {
			t.Errorf("%s: %d %s, want %d %s", what, gotStatus, gotCode, status, code)
		}
	}
	st, code := signed(t, blobAddr, "PUT", "val?restype=container", false, nil, "", -1)
	want("create container", 201, "", st, code)
	st, code = signed(t, blobAddr, "PUT", "val/b", false, map[string]string{"x-ms-blob-type": "BlockBlob"}, "data", -1)
	want("put blob", 201, "", st, code)

	st, code = signed(t, blobAddr, "GET", "val/b?versionid=yesterday", false, nil, "", -1)
	want("versionid that does not parse", 400, "InvalidQueryParameterValue", st, code)
	st, code = signed(t, blobAddr, "GET", "val?restype=container&comp=list&marker=%21%21%21", false, nil, "", -1)
	want("blob listing marker that does not parse", 400, "InvalidQueryParameterValue", st, code)

	props := func(inner string) string {
		return `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` + inner + `</StorageServiceProperties>`
	}
	for days, status := range map[string]int{"0": 400, "366": 400, "x": 400, "365": 202, "1": 202} {
		st, code = signed(t, blobAddr, "PUT", "?restype=service&comp=properties", false, nil,
			props(`<DeleteRetentionPolicy><Enabled>true</Enabled><Days>`+days+`</Days></DeleteRetentionPolicy>`), -1)
		wantCode := ""
		if status == 400 {
			wantCode = "InvalidXmlDocument"
		}
		want("DeleteRetentionPolicy Days "+days, status, wantCode, st, code)
		st, code = signed(t, queueAddr, "PUT", "?restype=service&comp=properties", false, nil,
			props(`<Logging><Version>1.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>`+days+`</Days></RetentionPolicy></Logging>`), -1)
		want("queue logging retention Days "+days, status, wantCode, st, code)
	}

	st, code = signed(t, queueAddr, "PUT", "valq", false, nil, "", -1)
	want("create queue", 201, "", st, code)
	st, code = signed(t, queueAddr, "POST", "valq/messages", false, nil, "", 2<<20)
	want("Put Message declaring 2 MiB", 413, "RequestBodyTooLarge", st, code)
	st, code = signed(t, blobAddr, "PUT", "val/big?comp=block&blockid=YmxvY2s%3D", false, nil, "", 4000<<20+1)
	want("Put Block declaring more than 4000 MiB", 413, "RequestBodyTooLarge", st, code)
	st, code = signed(t, blobAddr, "PUT", "val/big?comp=appendblock", false, nil, "", 100<<20+1)
	want("Append Block declaring more than 100 MiB", 413, "RequestBodyTooLarge", st, code)
	st, code = signed(t, tableAddr, "POST", "Tables", true, map[string]string{"Content-Type": "application/json"}, `{"TableName":"valt"}`, -1)
	want("create table", 201, "", st, code)
	st, code = signed(t, tableAddr, "POST", "valt", true, map[string]string{"Content-Type": "application/json"}, "", 5<<20)
	want("Insert Entity declaring 5 MiB", 413, "RequestBodyTooLarge", st, code)
	st, code = signed(t, tableAddr, "POST", "$batch", true, map[string]string{"Content-Type": "multipart/mixed; boundary=b"}, "", 5<<20)
	want("batch declaring 5 MiB", 413, "RequestBodyTooLarge", st, code)
}
