package robustness_test

import (
	"net/http"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestEchoedInputStaysWellFormed: input that a response echoes (list
// prefixes and markers, metadata values, filter text) may hold characters
// XML cannot carry; the answer is still well-formed XML or JSON, success or
// error.
func TestEchoedInputStaysWellFormed(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		randomFixture(t, tg)
		for _, c := range []call{
			{Svc: blobSvc, Method: http.MethodGet, Path: "?comp=list&prefix=%01%00%EF%BF%BF"},
			{Svc: blobSvc, Method: http.MethodGet, Path: "?comp=list&marker=%01"},
			{Svc: blobSvc, Method: http.MethodGet, Path: "rc1?restype=container&comp=list&prefix=%01&delimiter=%02"},
			{Svc: blobSvc, Method: http.MethodGet, Path: "rc1?restype=container&comp=list&marker=%01%FF"},
			{Svc: blobSvc, Method: http.MethodGet, Path: "rc1?restype=container&comp=list&maxresults=%01"},
			{Svc: blobSvc, Method: http.MethodGet, Path: "rc1/rb1?comp=blocklist&blocklisttype=%01"},
			{Svc: blobSvc, Method: http.MethodGet, Path: "?comp=blobs&where=%01"},
			{Svc: queueSvc, Method: http.MethodGet, Path: "?comp=list&prefix=%01%00%EF%BF%BF"},
			{Svc: queueSvc, Method: http.MethodGet, Path: "?comp=list&marker=%01"},
			{Svc: queueSvc, Method: http.MethodGet, Path: "?comp=list&maxresults=%01"},
			{Svc: queueSvc, Method: http.MethodGet, Path: "rq1/messages?numofmessages=%01"},
			{Svc: queueSvc, Method: http.MethodDelete, Path: "rq1/messages/00000000-0000-0000-0000-000000000000?popreceipt=%01"},
			{Svc: tableSvc, Method: http.MethodGet, Path: "rt1()?$filter=s%20eq%20%27%01%27"},
			{Svc: tableSvc, Method: http.MethodGet, Path: "rt1()?$filter=%01"},
			{Svc: tableSvc, Method: http.MethodGet, Path: "rt1()?$top=%01"},
			{Svc: tableSvc, Method: http.MethodGet, Path: "Tables?NextTableName=%01"},
			{Svc: tableSvc, Method: http.MethodPut, Path: "rt1(PartitionKey='p',RowKey='r')", Body: []byte(`{"s":"a\u0001b\u0000c"}`)},
			{Svc: tableSvc, Method: http.MethodGet, Path: "rt1(PartitionKey='p',RowKey='r')"},
			{Svc: tableSvc, Method: http.MethodGet, Path: "rt1()"},
		} {
			if msg := checkRandom(tg, c); msg != "" {
				t.Errorf("%s\n%s", describe(tg, c), msg)
			}
		}
	})
}
