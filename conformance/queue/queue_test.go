// Package queue drives lazuli's Queue service with the official Azure SDK
// for Go (azqueue) and with raw HTTP requests for wire details.
package queue

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func TestQueueCreateDeleteMetadata(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Queue(t)
		name := harness.UniqueName("meta")
		md := map[string]*string{"color": ptr("blue"), "size": ptr("xl")}
		_, err := svc.CreateQueue(ctx, name, &azqueue.CreateOptions{Metadata: md})
		MustNoErr(t, err)
		// Identical metadata: 204, which the SDK reports as success.
		_, err = svc.CreateQueue(ctx, name, &azqueue.CreateOptions{Metadata: md})
		MustNoErr(t, err)
		_, err = svc.CreateQueue(ctx, name, &azqueue.CreateOptions{Metadata: map[string]*string{"color": ptr("red")}})
		MustCode(t, err, 409, "QueueAlreadyExists")
		qc := svc.NewQueueClient(name)
		props, err := qc.GetProperties(ctx, nil)
		MustNoErr(t, err)
		if got := lower(props.Metadata); got["color"] != "blue" || got["size"] != "xl" || len(got) != 2 {
			t.Fatalf("metadata %v", got)
		}
		if props.ApproximateMessagesCount == nil || *props.ApproximateMessagesCount != 0 {
			t.Fatalf("count %v", props.ApproximateMessagesCount)
		}
		_, err = qc.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"only": ptr("one")}})
		MustNoErr(t, err)
		props, err = qc.GetProperties(ctx, nil)
		MustNoErr(t, err)
		if got := lower(props.Metadata); len(got) != 1 || got["only"] != "one" {
			t.Fatalf("metadata after set %v", got)
		}
		_, err = qc.Delete(ctx, nil)
		MustNoErr(t, err)
		_, err = qc.GetProperties(ctx, nil)
		MustCode(t, err, 404, "QueueNotFound")
		_, err = qc.Delete(ctx, nil)
		MustCode(t, err, 404, "QueueNotFound")
		_, err = qc.EnqueueMessage(ctx, "x", nil)
		MustCode(t, err, 404, "QueueNotFound")
	})
}

func lower(md map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range md {
		if v != nil {
			out[strings.ToLower(k)] = *v
		}
	}
	return out
}

func TestMessageLifecycle(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "life")
		for i := range 3 {
			_, err := qc.EnqueueMessage(ctx, fmt.Sprint("msg-", i), nil)
			MustNoErr(t, err)
		}
		peek, err := qc.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: ptr(int32(32))})
		MustNoErr(t, err)
		if len(peek.Messages) != 3 {
			t.Fatalf("peek %d", len(peek.Messages))
		}
		for i, m := range peek.Messages {
			if *m.MessageText != fmt.Sprint("msg-", i) || *m.DequeueCount != 0 {
				t.Fatalf("peek[%d] %q count %d", i, *m.MessageText, *m.DequeueCount)
			}
		}
		got, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: ptr(int32(2)), VisibilityTimeout: ptr(int32(60))})
		MustNoErr(t, err)
		if len(got.Messages) != 2 || *got.Messages[0].MessageText != "msg-0" || *got.Messages[1].MessageText != "msg-1" {
			t.Fatalf("dequeue %d", len(got.Messages))
		}
		m0 := got.Messages[0]
		if *m0.DequeueCount != 1 || m0.TimeNextVisible.Sub(*m0.InsertionTime) < 59*time.Second {
			t.Fatalf("dequeued %+v", m0)
		}
		if !tg.Remote && *got.Messages[0].PopReceipt == *got.Messages[1].PopReceipt {
			t.Fatalf("two messages of one Get share a pop receipt")
		}
		// Only msg-2 is visible now.
		peek, err = qc.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: ptr(int32(32))})
		MustNoErr(t, err)
		if len(peek.Messages) != 1 || *peek.Messages[0].MessageText != "msg-2" {
			t.Fatalf("peek after dequeue %d", len(peek.Messages))
		}
		// Update m0: new text, visible now, new receipt; dequeue count unchanged.
		up, err := qc.UpdateMessage(ctx, *m0.MessageID, *m0.PopReceipt, "msg-0-updated", &azqueue.UpdateMessageOptions{VisibilityTimeout: ptr(int32(0))})
		MustNoErr(t, err)
		if up.PopReceipt == nil || *up.PopReceipt == *m0.PopReceipt || up.TimeNextVisible == nil {
			t.Fatalf("update response %+v", up)
		}
		peek, err = qc.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: ptr(int32(32))})
		MustNoErr(t, err)
		if len(peek.Messages) != 2 {
			t.Fatalf("peek after update %d", len(peek.Messages))
		}
		// Visibility order: msg-2 has been visible longer than the
		// updated message, which became visible again just now.
		if pm := peek.Messages[1]; *pm.MessageID != *m0.MessageID || *pm.MessageText != "msg-0-updated" || *pm.DequeueCount != 1 {
			t.Fatalf("updated message %q count %d", *pm.MessageText, *pm.DequeueCount)
		}
		_, err = qc.DeleteMessage(ctx, *m0.MessageID, *up.PopReceipt, nil)
		MustNoErr(t, err)
		props, err := qc.GetProperties(ctx, nil)
		MustNoErr(t, err)
		if *props.ApproximateMessagesCount != 2 {
			t.Fatalf("count %d", *props.ApproximateMessagesCount)
		}
		_, err = qc.ClearMessages(ctx, nil)
		MustNoErr(t, err)
		peek, err = qc.PeekMessages(ctx, nil)
		MustNoErr(t, err)
		if len(peek.Messages) != 0 {
			t.Fatalf("after clear %d", len(peek.Messages))
		}
	})
}

// TestStalePopReceiptIsMessageNotFound pins what a stale receipt gets: the
// service documents (and clients observe) 404 MessageNotFound for Delete
// and Update Message with a receipt that is no longer current. The
// reference emulator answers 400 PopReceiptMismatch instead; lazuli
// follows the service, and the remote target records the emulator's
// answer.
func TestStalePopReceiptIsMessageNotFound(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "stale")
		_, err := qc.EnqueueMessage(ctx, "x", nil)
		MustNoErr(t, err)
		first, err := qc.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: ptr(int32(1))})
		MustNoErr(t, err)
		m := first.Messages[0]
		time.Sleep(1500 * time.Millisecond)
		second, err := qc.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: ptr(int32(60))})
		MustNoErr(t, err)
		if len(second.Messages) != 1 || *second.Messages[0].DequeueCount != 2 || *second.Messages[0].PopReceipt == *m.PopReceipt {
			t.Fatalf("redelivery %+v", second.Messages)
		}
		status, code := 404, "MessageNotFound"
		if tg.Remote {
			status, code = 400, "PopReceiptMismatch"
		}
		_, err = qc.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)
		MustCode(t, err, status, code)
		_, err = qc.UpdateMessage(ctx, *m.MessageID, *m.PopReceipt, "y", nil)
		MustCode(t, err, status, code)
		_, err = qc.DeleteMessage(ctx, *m.MessageID, *second.Messages[0].PopReceipt, nil)
		MustNoErr(t, err)
		_, err = qc.DeleteMessage(ctx, *m.MessageID, *second.Messages[0].PopReceipt, nil)
		MustCode(t, err, 404, "MessageNotFound")
	})
}

// TestLapsedReceiptStillValid: a receipt stays valid after its visibility
// timeout lapses as long as nobody dequeued the message again.
func TestLapsedReceiptStillValid(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "lapse")
		_, err := qc.EnqueueMessage(ctx, "x", nil)
		MustNoErr(t, err)
		got, err := qc.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: ptr(int32(1))})
		MustNoErr(t, err)
		time.Sleep(1500 * time.Millisecond)
		m := got.Messages[0]
		_, err = qc.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)
		MustNoErr(t, err)
	})
}

func TestExpiryAndDelayedVisibility(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "ttl")
		short, err := qc.EnqueueMessage(ctx, "short", &azqueue.EnqueueMessageOptions{TimeToLive: ptr(int32(1))})
		MustNoErr(t, err)
		_, err = qc.EnqueueMessage(ctx, "delayed", &azqueue.EnqueueMessageOptions{VisibilityTimeout: ptr(int32(1)), TimeToLive: ptr(int32(60))})
		MustNoErr(t, err)
		forever, err := qc.EnqueueMessage(ctx, "forever", &azqueue.EnqueueMessageOptions{TimeToLive: ptr(int32(-1))})
		MustNoErr(t, err)
		if y := forever.Messages[0].ExpirationTime.Year(); y != 9999 {
			t.Fatalf("infinite TTL expires in %d", y)
		}
		peek, err := qc.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: ptr(int32(32))})
		MustNoErr(t, err)
		if len(peek.Messages) != 2 {
			t.Fatalf("peek before expiry: %d messages", len(peek.Messages))
		}
		time.Sleep(1500 * time.Millisecond)
		got, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: ptr(int32(32))})
		MustNoErr(t, err)
		var texts []string
		for _, m := range got.Messages {
			texts = append(texts, *m.MessageText)
		}
		if strings.Join(texts, ",") != "delayed,forever" && strings.Join(texts, ",") != "forever,delayed" {
			t.Fatalf("after expiry got %v", texts)
		}
		sm := short.Messages[0]
		_, err = qc.DeleteMessage(ctx, *sm.MessageID, *sm.PopReceipt, nil)
		MustCode(t, err, 404, "MessageNotFound")
	})
}

// TestCompetingConsumers races receivers over HTTP: every message is
// delivered to exactly one receiver and none is lost.
func TestCompetingConsumers(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "race")
		const total = 120
		var wg sync.WaitGroup
		for p := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := p; i < total; i += 4 {
					if _, err := qc.EnqueueMessage(ctx, fmt.Sprint(i), nil); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		var mu sync.Mutex
		seen := map[string]int{}
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					got, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: ptr(int32(1 + w%4)), VisibilityTimeout: ptr(int32(300))})
					if err != nil {
						t.Error(err)
						return
					}
					if len(got.Messages) == 0 {
						return
					}
					for _, m := range got.Messages {
						mu.Lock()
						seen[*m.MessageText]++
						mu.Unlock()
						if _, err := qc.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		if len(seen) != total {
			t.Fatalf("received %d distinct messages, want %d", len(seen), total)
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("message %s delivered %d times", k, n)
			}
		}
	})
}

// TestUpdateReceiptRace: holders of one receipt race to update the
// message; exactly one wins.
func TestUpdateReceiptRace(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "urace")
		_, err := qc.EnqueueMessage(ctx, "x", nil)
		MustNoErr(t, err)
		got, err := qc.DequeueMessage(ctx, nil)
		MustNoErr(t, err)
		m := got.Messages[0]
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		g := newStartGate(8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				_, err := qc.UpdateMessage(ctx, *m.MessageID, *m.PopReceipt, fmt.Sprint("v", i), &azqueue.UpdateMessageOptions{VisibilityTimeout: ptr(int32(60))})
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else if !isMessageNotFound(err) {
					t.Errorf("losing update: %v, want 404 MessageNotFound", err)
				}
			}()
		}
		g.open()
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d updates won with one receipt, want 1", wins)
		}
	})
}

// TestMetadataLastWriterWins: concurrent Set Queue Metadata calls leave
// exactly one writer's complete set, never a mix.
func TestMetadataLastWriterWins(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "lww")
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := fmt.Sprint(i)
				_, err := qc.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"a": &v, "b": &v}})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		props, err := qc.GetProperties(ctx, nil)
		MustNoErr(t, err)
		md := lower(props.Metadata)
		if len(md) != 2 || md["a"] != md["b"] {
			t.Fatalf("metadata is a mix of writers: %v", md)
		}
	})
}

// TestACLLastWriterWins: concurrent Set Queue ACL calls leave exactly one
// writer's complete set of identifiers.
func TestACLLastWriterWins(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "acllww")
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				perm := []string{"r", "a", "u", "p", "ra", "up"}[i]
				_, err := qc.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{
					{ID: ptr(fmt.Sprint("one-", i)), AccessPolicy: &azqueue.AccessPolicy{Permission: ptr(perm)}},
					{ID: ptr(fmt.Sprint("two-", i)), AccessPolicy: &azqueue.AccessPolicy{Permission: ptr(perm)}},
				}})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		got, err := qc.GetAccessPolicy(ctx, nil)
		MustNoErr(t, err)
		ids := got.SignedIdentifiers
		if len(ids) != 2 || strings.TrimPrefix(*ids[0].ID, "one-") != strings.TrimPrefix(*ids[1].ID, "two-") ||
			*ids[0].AccessPolicy.Permission != *ids[1].AccessPolicy.Permission {
			t.Fatalf("ACL is a mix of writers: %s %s", *ids[0].ID, *ids[len(ids)-1].ID)
		}
	})
}

func TestListQueues(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Queue(t)
		prefix := harness.UniqueName("lst")
		var names []string
		for i := range 5 {
			n := fmt.Sprintf("%s-%d", prefix, i)
			names = append(names, n)
			_, err := svc.CreateQueue(ctx, n, &azqueue.CreateOptions{Metadata: map[string]*string{"idx": ptr(fmt.Sprint(i))}})
			MustNoErr(t, err)
			t.Cleanup(func() { svc.DeleteQueue(ctx, n, nil) })
		}
		pager := svc.NewListQueuesPager(&azqueue.ListQueuesOptions{Prefix: &prefix, MaxResults: ptr(int32(2)), Include: azqueue.ListQueuesInclude{Metadata: true}})
		var got []string
		pages := 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			MustNoErr(t, err)
			pages++
			for _, q := range page.Queues {
				got = append(got, *q.Name)
				if md := lower(q.Metadata); md["idx"] != strings.TrimPrefix(*q.Name, prefix+"-") {
					t.Fatalf("metadata of %s: %v", *q.Name, md)
				}
			}
		}
		if strings.Join(got, ",") != strings.Join(names, ",") || pages != 3 {
			t.Fatalf("listed %v in %d pages", got, pages)
		}
	})
}

func TestQueueACL(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "acl")
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		expiry := start.Add(48 * time.Hour)
		_, err := qc.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{
			{ID: ptr("readers"), AccessPolicy: &azqueue.AccessPolicy{Start: &start, Expiry: &expiry, Permission: ptr("rp")}},
			{ID: ptr("adders"), AccessPolicy: &azqueue.AccessPolicy{Permission: ptr("a")}},
		}})
		MustNoErr(t, err)
		got, err := qc.GetAccessPolicy(ctx, nil)
		MustNoErr(t, err)
		if len(got.SignedIdentifiers) != 2 {
			t.Fatalf("%d identifiers", len(got.SignedIdentifiers))
		}
		r := got.SignedIdentifiers[0]
		if *r.ID != "readers" || !r.AccessPolicy.Start.Equal(start) || !r.AccessPolicy.Expiry.Equal(expiry) || *r.AccessPolicy.Permission != "rp" {
			t.Fatalf("identifier %+v %+v", r, r.AccessPolicy)
		}
		_, err = qc.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{})
		MustNoErr(t, err)
		got, err = qc.GetAccessPolicy(ctx, nil)
		MustNoErr(t, err)
		if len(got.SignedIdentifiers) != 0 {
			t.Fatalf("after clear %d identifiers", len(got.SignedIdentifiers))
		}
	})
}

func TestServicePropertiesAndCORS(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Queue(t)
		_, err := svc.SetProperties(ctx, &azqueue.SetPropertiesOptions{CORS: []*azqueue.CORSRule{{
			AllowedOrigins: ptr("http://app.example"), AllowedMethods: ptr("GET,POST"),
			AllowedHeaders: ptr("x-ms-*"), ExposedHeaders: ptr("x-ms-request-id"), MaxAgeInSeconds: ptr(int32(90)),
		}}})
		MustNoErr(t, err)
		props, err := svc.GetServiceProperties(ctx, nil)
		MustNoErr(t, err)
		if len(props.CORS) != 1 || *props.CORS[0].AllowedOrigins != "http://app.example" || *props.CORS[0].MaxAgeInSeconds != 90 {
			t.Fatalf("cors %+v", props.CORS)
		}
		if props.Logging == nil || props.HourMetrics == nil || props.MinuteMetrics == nil {
			t.Fatalf("props %+v", props)
		}
		r := do(t, tg, "OPTIONS", "anyqueue/messages", "", "Origin", "http://app.example", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "x-ms-date")
		MustStatus(t, r, 200, "")
		if r.Header.Get("Access-Control-Allow-Origin") != "http://app.example" || r.Header.Get("Access-Control-Max-Age") != "90" {
			t.Fatalf("preflight headers %v", r.Header)
		}
		r = do(t, tg, "OPTIONS", "anyqueue/messages", "", "Origin", "http://other.example", "Access-Control-Request-Method", "POST")
		MustStatus(t, r, 403, "CorsPreflightFailure")
		_, err = svc.SetProperties(ctx, &azqueue.SetPropertiesOptions{CORS: []*azqueue.CORSRule{}})
		MustNoErr(t, err)
		if !tg.Remote {
			// The reference emulator has no secondary to report on.
			stats, err := svc.GetStatistics(ctx, nil)
			MustNoErr(t, err)
			if stats.GeoReplication == nil || stats.GeoReplication.Status == nil || *stats.GeoReplication.Status != azqueue.GeoReplicationStatusLive {
				t.Fatalf("stats %+v", stats.GeoReplication)
			}
		}
	})
}

func TestBadInputIsAzure4xx(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustQueue(t, tg, "bad")
		r := do(t, tg, "GET", name+"/messages?numofmessages=33", "")
		MustStatus(t, r, 400, "OutOfRangeQueryParameterValue")
		for _, part := range []string{"<QueryParameterName>numofmessages</QueryParameterName>", "<QueryParameterValue>33</QueryParameterValue>", "<MinimumAllowed>1</MinimumAllowed>", "<MaximumAllowed>32</MaximumAllowed>"} {
			if !strings.Contains(r.Body, part) {
				t.Fatalf("error body lacks %s: %s", part, r.Body)
			}
		}
		MustStatus(t, do(t, tg, "GET", name+"/messages?visibilitytimeout=604801", ""), 400, "OutOfRangeQueryParameterValue")
		MustStatus(t, do(t, tg, "POST", name+"/messages?visibilitytimeout=604801", "<QueueMessage><MessageText>x</MessageText></QueueMessage>"), 400, "OutOfRangeQueryParameterValue")
		MustStatus(t, do(t, tg, "POST", name+"/messages?messagettl=0", "<QueueMessage><MessageText>x</MessageText></QueueMessage>"), 400, "InvalidQueryParameterValue")
		// The reference emulator answers a body that is not XML with a bare
		// 400 and no error code; the service sends InvalidXmlDocument.
		malformed := "InvalidXmlDocument"
		if tg.Remote {
			malformed = ""
		}
		MustStatus(t, do(t, tg, "POST", name+"/messages", "<QueueMessage><MessageText>x</MessageText>"), 400, malformed)
		MustStatus(t, do(t, tg, "POST", name+"/messages", "<QueueMessage></QueueMessage>"), 400, "InvalidXmlDocument")
		MustStatus(t, do(t, tg, "PUT", "ab", ""), 400, "OutOfRangeInput")
		MustStatus(t, do(t, tg, "PUT", "Bad_Name", ""), 400, "InvalidResourceName")
		MustStatus(t, do(t, tg, "PUT", name+"?comp=acl", "<SignedIdentifiers><SignedIdentifier>"), 400, malformed)
		if !tg.Remote {
			// The reference emulator does not validate receipts.
			MustStatus(t, do(t, tg, "DELETE", name+"/messages/00000000-0000-0000-0000-000000000000?popreceipt=%21%21", ""), 400, "InvalidQueryParameterValue")
		}
	})
}

// TestOversizedMessageIsRequestBodyTooLarge pins the answer to a message
// over 64 KiB: 413 RequestBodyTooLarge with MaxLimit 65536 (service and
// reference emulator alike), not MessageTooLarge.
func TestOversizedMessageIsRequestBodyTooLarge(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "big")
		_, err := qc.EnqueueMessage(ctx, strings.Repeat("a", 64*1024), nil)
		MustNoErr(t, err)
		_, err = qc.EnqueueMessage(ctx, strings.Repeat("a", 64*1024+1), nil)
		MustCode(t, err, 413, "RequestBodyTooLarge")
	})
}

// TestWireShapes checks exact XML element order and status codes that
// the SDK hides.
func TestWireShapes(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		name := harness.UniqueName("wire")
		MustStatus(t, do(t, tg, "PUT", name, ""), 201, "")
		t.Cleanup(func() { do(t, tg, "DELETE", name, "") })
		MustStatus(t, do(t, tg, "PUT", name, ""), 204, "")
		r := do(t, tg, "POST", name+"/messages?messagettl=-1", "<QueueMessage><MessageText>hello &amp; bye</MessageText></QueueMessage>")
		MustStatus(t, r, 201, "")
		order := []string{"<QueueMessagesList>", "<QueueMessage>", "<MessageId>", "<InsertionTime>", "<ExpirationTime>Fri, 31 Dec 9999 23:59:59 GMT</ExpirationTime>", "<PopReceipt>", "<TimeNextVisible>", "</QueueMessage>"}
		inOrder(t, r.Body, order)
		if strings.Contains(r.Body, "<DequeueCount>") || strings.Contains(r.Body, "<MessageText>") {
			t.Fatalf("put response has get-only elements: %s", r.Body)
		}
		r = do(t, tg, "GET", name+"/messages?peekonly=true", "")
		MustStatus(t, r, 200, "")
		inOrder(t, r.Body, []string{"<MessageId>", "<InsertionTime>", "<ExpirationTime>", "<DequeueCount>0</DequeueCount>", "<MessageText>hello &amp; bye</MessageText>"})
		if strings.Contains(r.Body, "<PopReceipt>") || strings.Contains(r.Body, "<TimeNextVisible>") {
			t.Fatalf("peek response has receipt: %s", r.Body)
		}
		r = do(t, tg, "GET", name+"/messages?numofmessages=5", "")
		MustStatus(t, r, 200, "")
		inOrder(t, r.Body, []string{"<MessageId>", "<InsertionTime>", "<ExpirationTime>", "<PopReceipt>", "<TimeNextVisible>", "<DequeueCount>1</DequeueCount>", "<MessageText>hello &amp; bye</MessageText>"})
		id, rc := first(t, idRE, r.Body), first(t, receiptRE, r.Body)
		r = do(t, tg, "PUT", name+"/messages/"+id+"?popreceipt="+url.QueryEscape(rc)+"&visibilitytimeout=10", "")
		MustStatus(t, r, 204, "")
		if r.Header.Get("x-ms-popreceipt") == "" || r.Header.Get("x-ms-time-next-visible") == "" {
			t.Fatalf("update headers %v", r.Header)
		}
		r = do(t, tg, "GET", name+"?comp=metadata", "")
		MustStatus(t, r, 200, "")
		if r.Header.Get("x-ms-approximate-messages-count") != "1" {
			t.Fatalf("count header %q", r.Header.Get("x-ms-approximate-messages-count"))
		}
		MustStatus(t, do(t, tg, "DELETE", name+"/messages", ""), 204, "")
		r = do(t, tg, "GET", name+"/messages", "")
		MustStatus(t, r, 200, "")
		if !strings.Contains(r.Body, "<QueueMessagesList />") && !strings.Contains(r.Body, "<QueueMessagesList/>") && !strings.Contains(r.Body, "<QueueMessagesList></QueueMessagesList>") {
			t.Fatalf("empty list body %s", r.Body)
		}
		MustStatus(t, do(t, tg, "DELETE", name, ""), 204, "")
		MustStatus(t, do(t, tg, "GET", name+"?comp=metadata", ""), 404, "QueueNotFound")
	})
}

func inOrder(t *testing.T, body string, parts []string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(body[at:], p)
		if i < 0 {
			t.Fatalf("%q missing or out of order in %s", p, body)
		}
		at += i + len(p)
	}
}

// TestDeleteBigQueueStaysResponsive: deleting and clearing queues with
// many messages answer at once and the service keeps serving.
func TestDeleteBigQueueStaysResponsive(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Queue(t)
		name := harness.UniqueName("bulk")
		_, err := svc.CreateQueue(ctx, name, nil)
		MustNoErr(t, err)
		qc := svc.NewQueueClient(name)
		n := fillQueue(t, tg, qc, name, 20_000)
		props, err := qc.GetProperties(ctx, nil)
		MustNoErr(t, err)
		if int(*props.ApproximateMessagesCount) != n {
			t.Fatalf("count %d, want %d", *props.ApproximateMessagesCount, n)
		}
		_, err = qc.ClearMessages(ctx, nil)
		MustNoErr(t, err)
		props, err = qc.GetProperties(ctx, nil)
		MustNoErr(t, err)
		if *props.ApproximateMessagesCount != 0 {
			t.Fatalf("count after clear %d", *props.ApproximateMessagesCount)
		}
		fillQueue(t, tg, qc, name, 100_000)
		_, err = qc.Delete(ctx, nil)
		MustNoErr(t, err)
		// The name is usable again and the service answers meanwhile.
		_, err = svc.CreateQueue(ctx, name, nil)
		MustNoErr(t, err)
		peek, err := qc.PeekMessages(ctx, nil)
		MustNoErr(t, err)
		if len(peek.Messages) != 0 {
			t.Fatalf("recreated queue has %d messages", len(peek.Messages))
		}
		_, err = qc.EnqueueMessage(ctx, "after", nil)
		MustNoErr(t, err)
	})
}
