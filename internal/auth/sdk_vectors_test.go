package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// The requests and tokens below were recorded from the Azure SDK for Go
// (azblob v1.8.3, azqueue v1.0.1, data/aztables v1.4.1, azfile v1.7.1)
// signing with the development key: what the SDKs send must verify. They
// cover the culture-aware header order of azblob (x-ms-meta-a_b before
// x-ms-meta-a1), Shared Key Lite for Table with quotes in entity keys, the
// 16-field blob SAS of sv 2026-12-06, snapshot SAS, and the account SAS
// layouts with and without the ses line.

func TestSDKSharedKeyRequestsVerify(t *testing.T) {
	vectors := []struct {
		name    string
		svc     Service
		method  string
		url     string
		headers []string
	}{
		{"azblob create container with metadata", Blob, "PUT", "http://127.0.0.1:10000/devstoreaccount1/c1?restype=container", []string{"Authorization", "SharedKey devstoreaccount1:RahYy/VwmA8KO73OaOSRQm8GlkuSTI7iAEpKgSxZoNc=", "X-Ms-Date", "Sun, 22 Nov 2026 01:03:00 GMT", "x-ms-meta-a1", "2", "x-ms-meta-a_b", "1", "x-ms-version", "2026-12-06"}},
		{"azblob upload blob", Blob, "PUT", "http://127.0.0.1:10000/devstoreaccount1/c1/dir%2Fa%20b+c.txt", []string{"Authorization", "SharedKey devstoreaccount1:CuLBqIOsp4fpAz26A6Iqy7/40slyxB0fBbbJIGgTF9g=", "Content-Length", "5", "Content-Type", "application/octet-stream", "X-Ms-Date", "Sun, 22 Nov 2026 01:03:00 GMT", "x-ms-blob-type", "BlockBlob", "x-ms-version", "2026-12-06"}},
		{"azblob list blobs", Blob, "GET", "http://127.0.0.1:10000/devstoreaccount1/c1?comp=list&include=metadata%2Csnapshots&restype=container", []string{"Accept", "application/xml", "Authorization", "SharedKey devstoreaccount1:i5eeohbD7HPePtMh1vMz85HOLXU5LG0qq7XFdgAm6o4=", "X-Ms-Date", "Sun, 22 Nov 2026 01:03:00 GMT", "x-ms-version", "2026-12-06"}},
		{"azqueue enqueue", Queue, "POST", "http://127.0.0.1:10001/devstoreaccount1/q1/messages", []string{"Accept", "application/xml", "Authorization", "SharedKey devstoreaccount1:P0aKJO9DgnYPLJo8b8H/1OLZE8utS3kqixUUFtOaZrQ=", "Content-Length", "100", "Content-Type", "application/xml", "X-Ms-Date", "Sun, 22 Nov 2026 01:03:00 GMT", "x-ms-version", "2024-08-04"}},
		{"aztables get entity", Table, "GET", "http://127.0.0.1:10002/devstoreaccount1/mytable(PartitionKey='p%201',RowKey='r%27%272')", []string{"Accept", "application/json;odata=minimalmetadata", "Authorization", "SharedKeyLite devstoreaccount1:UZBz6C9QDH8VsgVKtdu7aFHIbxsKHEwDvljN/A0/E6A=", "DataServiceVersion", "3.0", "X-Ms-Date", "Sun, 22 Nov 2026 12:00:00 GMT", "x-ms-version", "2019-02-02"}},
		{"azfile create file", File, "PUT", "http://127.0.0.1:10003/devstoreaccount1/share/a%20b.txt", []string{"Accept", "application/xml", "Authorization", "SharedKey devstoreaccount1:bXxI0OBDaDA9+XV+g0I6ZTFa5iCcT98v1Ld9qCqk9qo=", "X-Ms-Date", "Sun, 22 Nov 2026 01:03:00 GMT", "x-ms-content-length", "10", "x-ms-type", "file", "x-ms-version", "2026-06-06"}},
	}
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			r := httptest.NewRequest(v.method, v.url, nil)
			for i := 0; i+1 < len(v.headers); i += 2 {
				r.Header.Add(v.headers[i], v.headers[i+1])
			}
			a := MustAuthenticator(t, nil, false)
			date, err := http.ParseTime(r.Header.Get("x-ms-date"))
			if err != nil {
				t.Fatal(err)
			}
			a.now = func() time.Time { return date }
			id, err := a.Authenticate(r, v.svc, DevAccount)
			if err != nil {
				t.Fatalf("%v %v", err, detailOf(err))
			}
			if id.Kind != SharedKey && id.Kind != SharedKeyLite {
				t.Fatalf("kind %v", id.Kind)
			}
			// Another signature must fail.
			scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			r.Header.Set("Authorization", scheme+" "+DevAccount+":"+sharedkey.ComputeSignature(devKey(), "other"))
			if _, err := a.Authenticate(r, v.svc, DevAccount); err == nil {
				t.Fatal("altered signature accepted")
			}
		})
	}
}

func TestSDKSASTokensVerify(t *testing.T) {
	vectors := []struct {
		name  string
		svc   Service
		path  string
		query string
		need  Access
	}{
		{"azblob container SAS", Blob, "c1/some%20blob", "" + "se=2027-01-01T00%3A00%3A00Z&sig=i0ZqlNqFbGHpuKsAi0W0ko1kTzlLS8uLVsn5spkMolg%3D&sp=rl&spr=https%2Chttp&sr=c&st=2026-11-01T00%3A00%3A00Z&sv=2026-12-06", blobRead("c1", "some blob")},
		{"azblob snapshot SAS", Blob, "c1/b", "snapshot=2026-01-02T03%3A04%3A05.6000000Z&" + "se=2027-01-01T00%3A00%3A00Z&sig=wNa3fXo%2F2wpLSDOksxQHZm%2FCjp1j9%2FsWZfaHDZ7JzIY%3D&sp=r&sr=bs&sv=2026-12-06", Access{Resource: ResObject, Perms: "r", Container: "c1", Object: "b", Snapshot: "2026-01-02T03:04:05.6000000Z"}},
		{"azblob account SAS", Blob, "c1/b", "" + "se=2027-01-01T00%3A00%3A00Z&sig=JeLiGlLe3UHWm642i4ejm71iwzO0bTV82kseFVM3NFE%3D&sp=rl&srt=co&ss=b&sv=2026-12-06", blobRead("c1", "b")},
		{"azqueue queue SAS", Queue, "q1/messages", "" + "se=2027-01-01T00%3A00%3A00Z&sig=zHX0lIO5utstTsED3A9PsLfzJh8EvP9NzXs5nDzimGw%3D&sp=raup&sv=2020-02-10", Access{Resource: ResObject, Perms: "a", Container: "q1"}},
		{"azqueue account SAS", Queue, "q1/messages", "" + "se=2027-01-01T00%3A00%3A00Z&sig=biy2kxayc4x5BPV0qX%2Bx6WpUnrZwcJbMPV%2BVzE%2Fe0Io%3D&sp=rap&srt=sco&ss=q&sv=2020-02-10", Access{Resource: ResObject, Perms: "a", Container: "q1"}},
		{"aztables table SAS", Table, "MyTable(PartitionKey='p',RowKey='r')", "" + "se=2027-01-01T00%3A00%3A00Z&sig=Jw2swmANuaaLWPe7ESCl%2Fhj2jQTxrIO4HdFDt7ctr3I%3D&sp=raud&sv=2019-02-02&tn=mytable", Access{Resource: ResObject, Perms: "r", Container: "MyTable"}},
		{"aztables account SAS", Table, "MyTable()", "" + "se=2027-01-01T00%3A00%3A00Z&sig=8ry0dMXrHv0DTwieBPwHPwi1n7D94jETieXN8kIh8Vg%3D&sp=rl&srt=sco&ss=t&sv=2019-02-02", Access{Resource: ResObject, Perms: "r", Container: "MyTable"}},
		{"azfile file SAS", File, "share/dir/a%20b.txt", "" + "rsct=text%2Fplain&se=2027-01-01T00%3A00%3A00Z&sig=r7ohrkdunj6rbn%2B2BKR7%2BNQ%2BD8lqmGSzV6wPf2gOqT8%3D&sp=r&sr=f&sv=2026-06-06", Access{Resource: ResObject, Perms: "r", Container: "share", Object: "dir/a b.txt"}},
		{"azfile account SAS", File, "share/dir", "" + "se=2027-01-01T00%3A00%3A00Z&sig=rTdbXqnyP7e4b2T5gOOgtz5%2B1OPsIp%2BskIP7kS%2FFDcQ%3D&sp=rl&srt=sco&ss=f&sv=2026-06-06", Access{Resource: ResContainer, Perms: "l", Container: "share", Object: "dir"}},
	}
	a := MustAuthenticator(t, nil, false)
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			wantResult(t, runSAS(t, a, v.svc, v.path, v.query, v.need, nil), 0)
			wantResult(t, runSAS(t, a, v.svc, v.path, replaceParam(v.query, "se", "2027-01-02T00:00:00Z"), v.need, nil), azerr.AuthenticationFailed)
		})
	}
}
