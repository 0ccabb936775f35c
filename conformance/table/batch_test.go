package table

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func TestBatchSDK(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "bsdk")
		etag := MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "upd", "V": "old", "Keep": "k"})
		MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "del"})
		MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "mrg", "V": "old", "Keep": "k"})
		actions := []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "new", "V": "n"})},
			{ActionType: aztables.TransactionTypeUpdateReplace, IfMatch: &etag, Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "upd", "V": "new"})},
			{ActionType: aztables.TransactionTypeDelete, Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "del"})},
			{ActionType: aztables.TransactionTypeUpdateMerge, Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "mrg", "V": "new"})},
			{ActionType: aztables.TransactionTypeInsertMerge, Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "im", "V": "im"})},
			{ActionType: aztables.TransactionTypeInsertReplace, Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "ir", "V": "ir"})},
		}
		if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
			t.Fatal(err)
		}
		m, _ := MustGet(t, c, "p", "upd")
		if m["V"] != "new" || m["Keep"] != nil {
			t.Fatalf("replace in batch: %v", m)
		}
		m, _ = MustGet(t, c, "p", "mrg")
		if m["V"] != "new" || m["Keep"] != "k" {
			t.Fatalf("merge in batch: %v", m)
		}
		_, err := c.GetEntity(ctx, "p", "del", nil)
		WantCode(t, err, 404, "ResourceNotFound")
		got, _ := listAll(t, c, nil)
		if keysOf(got) != "p/im,p/ir,p/mrg,p/new,p/upd" {
			t.Fatalf("after batch: %s", keysOf(got))
		}

		// A failing op rolls back everything before it.
		stale := etag
		fail := []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "x1"})},
			{ActionType: aztables.TransactionTypeUpdateMerge, IfMatch: &stale, Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "upd", "V": "zzz"})},
		}
		if _, err := c.SubmitTransaction(ctx, fail, nil); err == nil {
			t.Fatal("batch with a stale ETag succeeded")
		}
		_, err = c.GetEntity(ctx, "p", "x1", nil)
		WantCode(t, err, 404, "ResourceNotFound")
		m, _ = MustGet(t, c, "p", "upd")
		if m["V"] != "new" {
			t.Fatalf("failed batch changed upd: %v", m)
		}
		// Different partitions fail.
		cross := []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "y1"})},
			{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(t, map[string]any{"PartitionKey": "q", "RowKey": "y2"})},
		}
		// The emulator does not enforce one partition per batch; Azure does.
		if _, err := c.SubmitTransaction(ctx, cross, nil); err == nil && !tg.Remote {
			t.Fatal("cross-partition batch succeeded")
		}
		if tg.Remote {
			return
		}
		_, err = c.GetEntity(ctx, "p", "y1", nil)
		WantCode(t, err, 404, "ResourceNotFound")
		// 100 operations are fine.
		var hundred []aztables.TransactionAction
		for i := 0; i < 100; i++ {
			hundred = append(hundred, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
				Entity: entityJSON(t, map[string]any{"PartitionKey": "h", "RowKey": fmt.Sprintf("%03d", i)})})
		}
		if _, err := c.SubmitTransaction(ctx, hundred, nil); err != nil {
			t.Fatal(err)
		}
		got, _ = listAll(t, c, &aztables.ListEntitiesOptions{Filter: ptr("PartitionKey eq 'h'")})
		if len(got) != 100 {
			t.Fatalf("100-op batch stored %d", len(got))
		}
	})
}

// batchBody builds a raw $batch body with one changeset of the given
// operations ("METHOD relative-url", headers, body).
type rawOp struct {
	method, path string
	headers      map[string]string
	body         string
}

func buildBatch(tg *harness.Target, ops []rawOp) (string, string) {
	var b strings.Builder
	b.WriteString("--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n")
	for i, op := range ops {
		b.WriteString("--changeset_C\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		fmt.Fprintf(&b, "%s %s/%s HTTP/1.1\r\n", op.method, tg.TableURL, op.path)
		fmt.Fprintf(&b, "Content-ID: %d\r\n", i+1)
		b.WriteString("Accept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nDataServiceVersion: 3.0\r\n")
		for k, v := range op.headers {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
		b.WriteString("\r\n" + op.body + "\r\n")
	}
	b.WriteString("--changeset_C--\r\n--batch_B--\r\n")
	return b.String(), "multipart/mixed; boundary=batch_B"
}

// subResponses parses a $batch response into its changeset sub-responses.
func subResponses(t *testing.T, r *Raw) []*http.Response {
	t.Helper()
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("batch response content type %q", r.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(r.Body), params["boundary"])
	outer, err := mr.NextPart()
	if err != nil {
		t.Fatalf("batch response: %v\n%s", err, r.Body)
	}
	_, cs, err := mime.ParseMediaType(outer.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	inner := multipart.NewReader(outer, cs["boundary"])
	var out []*http.Response
	for {
		p, err := inner.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(p)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(body)), nil)
		if err != nil {
			t.Fatalf("sub-response: %v\n%s", err, body)
		}
		out = append(out, resp)
	}
}

func TestBatchWire(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustTable(t, tg, "bwire")
		MustStatus(t, Do(t, tg, "POST", name, map[string]string{"Prefer": "return-no-content"}, `{"PartitionKey":"p","RowKey":"exists"}`), 204, "")
		body, ct := buildBatch(tg, []rawOp{
			{"POST", name, map[string]string{"Prefer": "return-no-content"}, `{"PartitionKey":"p","RowKey":"a"}`},
			{"POST", name, nil, `{"PartitionKey":"p","RowKey":"b","N":1}`},
			{"PUT", name + "(PartitionKey='p',RowKey='c')", nil, `{"N":2}`},
			{"DELETE", name + "(PartitionKey='p',RowKey='exists')", map[string]string{"If-Match": "*"}, ``},
		})
		r := Do(t, tg, "POST", "$batch", map[string]string{"Content-Type": ct}, body)
		MustStatus(t, r, 202, "")
		subs := subResponses(t, r)
		if len(subs) != 4 {
			t.Fatalf("%d sub-responses", len(subs))
		}
		wantStatus := []int{204, 201, 204, 204}
		for i, s := range subs {
			if s.StatusCode != wantStatus[i] {
				t.Fatalf("op %d: status %d", i, s.StatusCode)
			}
			// Content-ID echo: lazuli echoes it (the emulator does not).
			if !tg.Remote && s.Header.Get("Content-ID") != fmt.Sprint(i+1) {
				t.Fatalf("op %d: Content-ID %q", i, s.Header.Get("Content-ID"))
			}
			if i < 3 && !strings.HasPrefix(s.Header.Get("ETag"), `W/"datetime'`) {
				t.Fatalf("op %d: ETag %q", i, s.Header.Get("ETag"))
			}
		}
		created, _ := io.ReadAll(subs[1].Body)
		if !strings.Contains(string(created), `"RowKey":"b"`) {
			t.Fatalf("201 body %s", created)
		}

		// A failing operation: a single sub-response naming its index.
		body, ct = buildBatch(tg, []rawOp{
			{"POST", name, nil, `{"PartitionKey":"p","RowKey":"z1"}`},
			{"POST", name, nil, `{"PartitionKey":"p","RowKey":"z2"}`},
			{"POST", name, nil, `{"PartitionKey":"p","RowKey":"a"}`},
		})
		r = Do(t, tg, "POST", "$batch", map[string]string{"Content-Type": ct}, body)
		MustStatus(t, r, 202, "")
		subs = subResponses(t, r)
		if len(subs) != 1 || subs[0].StatusCode != 409 {
			t.Fatalf("failure sub-responses: %d (%v)", len(subs), subs)
		}
		eb, _ := io.ReadAll(subs[0].Body)
		fr := &Raw{Body: eb}
		if fr.Code(t) != "EntityAlreadyExists" || !strings.HasPrefix(fr.Message(t), "2:") {
			t.Fatalf("failure body %s", eb)
		}
		MustStatus(t, Do(t, tg, "GET", name+"(PartitionKey='p',RowKey='z1')", nil, ""), 404, "ResourceNotFound")

		// Cross-partition: 400 CommandsInBatchActOnDifferentPartitions at index 1.
		body, ct = buildBatch(tg, []rawOp{
			{"POST", name, nil, `{"PartitionKey":"p","RowKey":"y1"}`},
			{"POST", name, nil, `{"PartitionKey":"q","RowKey":"y2"}`},
		})
		r = Do(t, tg, "POST", "$batch", map[string]string{"Content-Type": ct}, body)
		subs = subResponses(t, r)
		if len(subs) != 1 || subs[0].StatusCode != 400 {
			t.Fatalf("cross partition: %v", subs)
		}
		eb, _ = io.ReadAll(subs[0].Body)
		fr = &Raw{Body: eb}
		if fr.Code(t) != "CommandsInBatchActOnDifferentPartitions" || !strings.HasPrefix(fr.Message(t), "1:") {
			t.Fatalf("cross partition body %s", eb)
		}
		// Duplicate row.
		body, ct = buildBatch(tg, []rawOp{
			{"POST", name, nil, `{"PartitionKey":"p","RowKey":"d1"}`},
			{"MERGE", name + "(PartitionKey='p',RowKey='d1')", nil, `{"X":1}`},
		})
		r = Do(t, tg, "POST", "$batch", map[string]string{"Content-Type": ct}, body)
		subs = subResponses(t, r)
		eb, _ = io.ReadAll(subs[0].Body)
		fr = &Raw{Body: eb}
		if subs[0].StatusCode != 400 || fr.Code(t) != "InvalidDuplicateRow" || !strings.HasPrefix(fr.Message(t), "1:") {
			t.Fatalf("duplicate row: %d %s", subs[0].StatusCode, eb)
		}
		// 101 operations: 400.
		var many []rawOp
		for i := 0; i < 101; i++ {
			many = append(many, rawOp{"POST", name, nil, fmt.Sprintf(`{"PartitionKey":"m","RowKey":"%03d"}`, i)})
		}
		body, ct = buildBatch(tg, many)
		r = Do(t, tg, "POST", "$batch", map[string]string{"Content-Type": ct}, body)
		if r.Status == 202 {
			subs = subResponses(t, r)
			if len(subs) != 1 || subs[0].StatusCode != 400 {
				t.Fatalf("101 ops accepted")
			}
		} else if r.Status != 400 {
			t.Fatalf("101 ops: %d", r.Status)
		}
		// Malformed bodies: 400, never 500.
		for _, bad := range []string{"", "garbage", "--batch_B\r\nContent-Type: text/plain\r\n\r\nhi\r\n--batch_B--\r\n",
			"--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n--changeset_C\r\nContent-Type: application/http\r\n\r\nNOT A REQUEST\r\n--changeset_C--\r\n--batch_B--\r\n"} {
			r := Do(t, tg, "POST", "$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_B"}, bad)
			if r.Status != 400 && r.Status != 202 {
				t.Fatalf("malformed batch %q: %d %s", bad, r.Status, r.Body)
			}
		}
		// Over 4 MiB: 413.
		huge := strings.Repeat("x", 4<<20+10)
		r = Do(t, tg, "POST", "$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_B"}, huge)
		MustStatus(t, r, 413, "RequestBodyTooLarge")
	})
}

func TestBatchPointQuery(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustTable(t, tg, "bq")
		MustStatus(t, Do(t, tg, "POST", name, map[string]string{"Prefer": "return-no-content"}, `{"PartitionKey":"p","RowKey":"r","V":"v"}`), 204, "")
		body := "--batch_B\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
			"GET " + tg.TableURL + "/" + name + "(PartitionKey='p',RowKey='r') HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n\r\n--batch_B--\r\n"
		r := Do(t, tg, "POST", "$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_B"}, body)
		MustStatus(t, r, 202, "")
		if !strings.Contains(string(r.Body), "HTTP/1.1 200") || !strings.Contains(string(r.Body), `"V":"v"`) {
			t.Fatalf("batch query: %s", r.Body)
		}
	})
}

var _ = azcore.ETagAny
