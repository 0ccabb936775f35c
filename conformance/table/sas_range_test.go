package table

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// sasQuery signs a service SAS for table and returns its query string,
// key range included.
func sasQuery(t *testing.T, tg *harness.Target, table string, v aztables.SASSignatureValues) string {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(tg.Account, tg.Key)
	if err != nil {
		t.Fatal(err)
	}
	v.TableName = table
	v.ExpiryTime = time.Now().Add(time.Hour).UTC()
	qs, err := v.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"spk", v.StartPartitionKey}, {"srk", v.StartRowKey}, {"epk", v.EndPartitionKey}, {"erk", v.EndRowKey}} {
		if kv[1] != "" {
			qs += "&" + kv[0] + "=" + url.QueryEscape(kv[1])
		}
	}
	return qs
}

// A Table SAS limited to a key range confines Query Entities to that
// range, with or without a $filter and across continuation pages; point
// reads and writes outside it, also inside a batch, are refused with 403
// AuthorizationFailure.
func TestServiceSASKeyRangeScopesQueries(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		admin, name := MustTable(t, tg, "sasrange")
		for _, k := range [][2]string{{"a", "1"}, {"b", "1"}, {"b", "5"}, {"b", "9"}, {"c", "1"}, {"c", "5"}, {"d", "5"}, {"d", "6"}, {"e", "1"}} {
			MustAdd(t, admin, map[string]any{"PartitionKey": k[0], "RowKey": k[1], "N": 1})
		}
		// (b,5) .. (d,5) inclusive.
		v := aztables.SASSignatureValues{Permissions: "raud", StartPartitionKey: "b", StartRowKey: "5", EndPartitionKey: "d", EndRowKey: "5"}
		rng := sasClient(t, tg, name, v)
		want := "b/5,b/9,c/1,c/5,d/5"
		if got, _ := listAll(t, rng, nil); keysOf(got) != want {
			t.Fatalf("query under range: %s, want %s", keysOf(got), want)
		}
		top := int32(2)
		got, pages := listAll(t, rng, &aztables.ListEntitiesOptions{Top: &top})
		if keysOf(got) != want || pages < 3 {
			t.Fatalf("paged query under range: %s in %d pages, want %s", keysOf(got), pages, want)
		}
		for filter, want := range map[string]string{
			"N eq 1":                  "b/5,b/9,c/1,c/5,d/5",
			"PartitionKey eq 'a'":     "",
			"PartitionKey ge 'd'":     "d/5",
			"PartitionKey le 'b'":     "b/5,b/9",
			"RowKey eq '1' or N eq 2": "c/1",
		} {
			f := filter
			got, _ := listAll(t, rng, &aztables.ListEntitiesOptions{Filter: &f})
			if keysOf(got) != want {
				t.Errorf("filter %q under range: %q, want %q", filter, keysOf(got), want)
			}
		}
		// A continuation token pointing before the range resumes inside it.
		qs := sasQuery(t, tg, name, v)
		resp, err := tg.HTTP.Get(tg.TableURL + "/" + name + "()?" + qs + "&NextPartitionKey=" + url.QueryEscape(encodeNext("a")) + "&NextRowKey=" + url.QueryEscape(encodeNext("1")))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(body), `"PartitionKey":"a"`) || strings.Contains(string(body), `"PartitionKey":"e"`) || !strings.Contains(string(body), `"RowKey":"9"`) {
			t.Fatalf("continued query under range: %d %s", resp.StatusCode, body)
		}

		if _, err := rng.GetEntity(ctx, "c", "1", nil); err != nil {
			t.Fatalf("point read inside range: %v", err)
		}
		for _, k := range [][2]string{{"a", "1"}, {"b", "1"}, {"d", "6"}, {"e", "1"}} {
			_, err := rng.GetEntity(ctx, k[0], k[1], nil)
			WantCode(t, err, 403, "AuthorizationFailure")
			_, err = rng.DeleteEntity(ctx, k[0], k[1], nil)
			WantCode(t, err, 403, "AuthorizationFailure")
		}
		_, err = rng.SubmitTransaction(ctx, []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeInsertReplace, Entity: entityJSON(t, map[string]any{"PartitionKey": "b", "RowKey": "4"})},
		}, nil)
		if err == nil {
			t.Fatal("batch write outside the range succeeded")
		}
		if _, err := admin.GetEntity(ctx, "b", "4", nil); StatusCode(err) != 404 {
			t.Fatalf("batch write outside the range left an entity: %v", err)
		}

		// A batch's point query is checked against the range too.
		batchGet := func(pk, rk string) string {
			body := "--batch_B\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"GET " + tg.TableURL + "/" + name + "(PartitionKey='" + pk + "',RowKey='" + rk + "') HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n\r\n--batch_B--\r\n"
			req, _ := http.NewRequestWithContext(ctx, "POST", tg.TableURL+"/$batch?"+qs, strings.NewReader(body))
			req.Header.Set("Content-Type", "multipart/mixed; boundary=batch_B")
			req.Header.Set("x-ms-version", "2019-02-02")
			req.Header.Set("DataServiceVersion", "3.0")
			resp, err := tg.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return string(b)
		}
		if b := batchGet("c", "5"); !strings.Contains(b, "HTTP/1.1 200") {
			t.Fatalf("batch read inside range: %s", b)
		}
		if b := batchGet("e", "1"); !strings.Contains(b, "HTTP/1.1 403") || !strings.Contains(b, "AuthorizationFailure") {
			t.Fatalf("batch read outside range: %s", b)
		}
	})
}

// encodeNext builds a continuation token as the service hands them out.
func encodeNext(s string) string { return "1!" + base64.RawURLEncoding.EncodeToString([]byte(s)) }
