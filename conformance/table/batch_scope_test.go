package table

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// TestBatchStaysInScope pins the reach of an entity group transaction: a
// table SAS posted with a $batch authorizes operations on its own table
// only (an operation on another table is 403 AuthorizationFailure in the
// changeset's answer and writes nothing), and an operation naming
// another account in a path-style URL is 400 InvalidUri, also writing
// nothing.
func TestBatchStaysInScope(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		_, own := MustTable(t, tg, "scopeown")
		otherClient, other := MustTable(t, tg, "scopeother")
		qs := sasQuery(t, tg, own, aztables.SASSignatureValues{Permissions: "raud"})
		post := func(opURL, query string) string {
			t.Helper()
			body := "--batch_S\r\nContent-Type: multipart/mixed; boundary=changeset_S\r\n\r\n" +
				"--changeset_S\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"POST " + opURL + " HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\n\r\n" +
				`{"PartitionKey":"p","RowKey":"r"}` + "\r\n--changeset_S--\r\n--batch_S--\r\n"
			req, err := http.NewRequestWithContext(ctx, "POST", tg.TableURL+"/$batch"+query, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "multipart/mixed; boundary=batch_S")
			req.Header.Set("x-ms-version", "2019-02-02")
			req.Header.Set("DataServiceVersion", "3.0")
			if query == "" {
				if err := sharedkey.Sign(req, tg.Account, tg.KeyBytes(), true); err != nil {
					t.Fatal(err)
				}
			}
			resp, err := tg.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return string(b)
		}
		if b := post(tg.TableURL+"/"+other, "?"+qs); !strings.Contains(b, "HTTP/1.1 403") || !strings.Contains(b, "AuthorizationFailure") {
			t.Fatalf("other table under this table's SAS: %s", b)
		}
		if _, err := otherClient.GetEntity(ctx, "p", "r", nil); err == nil {
			t.Fatal("the other table was written")
		}
		if tg.Remote {
			return
		}
		u := strings.Replace(tg.TableURL, "/"+tg.Account, "/someotheraccount", 1) + "/" + own
		if b := post(u, ""); !strings.Contains(b, "HTTP/1.1 400") || !strings.Contains(b, "InvalidUri") {
			t.Fatalf("operation naming another account: %s", b)
		}
	})
}
