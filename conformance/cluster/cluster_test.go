// Package cluster tests several lazuli instances on one PostgreSQL
// database through the official SDKs: one clock whatever an instance's own
// says, snapshot reads while other instances write, the kill -9 of an
// instance and a restart of the database under load. (The race tests of
// the other conformance packages run across three instances with the
// postgres3-tcp target.)
package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// instance is one lazuli on the shared database, reached over TCP.
type instance struct {
	emu                *emulator.Emulator
	blob, queue, table string
}

// startInstances starts n in-process lazuli instances (real listeners) on
// one fresh database; now[i], when set, is instance i's own clock.
func startInstances(t *testing.T, n int, now ...func() time.Time) []*instance {
	t.Helper()
	url := pgtest.NewDatabase(t)
	var out []*instance
	for i := range n {
		o := emulator.Options{EngineKind: "postgres", PostgresURL: url}
		if i < len(now) {
			o.Now = now[i]
		}
		emu, err := emulator.Start(o)
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		t.Cleanup(func() { emu.Close() })
		out = append(out, &instance{emu: emu, blob: emu.Endpoint(emulator.Blob),
			queue: emu.Endpoint(emulator.Queue), table: emu.Endpoint(emulator.Table)})
	}
	return out
}

func clientOptions() azcore.ClientOptions {
	return azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1},
		Transport: &http.Client{Timeout: 30 * time.Second}}
}

func blobClient(t testing.TB, endpoint string) *azblob.Client {
	cred, err := azblob.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	c, err := azblob.NewClientWithSharedKeyCredential(endpoint+"/", cred, &azblob.ClientOptions{ClientOptions: clientOptions()})
	must(t, err)
	return c
}

func queueClient(t testing.TB, endpoint string) *azqueue.ServiceClient {
	cred, err := azqueue.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	c, err := azqueue.NewServiceClientWithSharedKeyCredential(endpoint+"/", cred, &azqueue.ClientOptions{ClientOptions: clientOptions()})
	must(t, err)
	return c
}

func tableClient(t testing.TB, endpoint, table string) *aztables.Client {
	cred, err := aztables.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	c, err := aztables.NewServiceClientWithSharedKey(endpoint+"/", cred, &aztables.ClientOptions{ClientOptions: clientOptions()})
	must(t, err)
	return c.NewClient(table)
}

func errorCode(err error) (int, string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.ErrorCode
	}
	return 0, ""
}

// TestClockSkewedInstance: instance 1's own clock runs ten minutes ahead.
// Every time rule still follows the database's clock: a lease granted by
// instance 0 holds on instance 1, a message instance 0 handed out stays
// invisible to instance 1, a SAS that expires in two minutes works on
// instance 1, and Last-Modified is the real time, not the skewed one.
func TestClockSkewedInstance(t *testing.T) {
	const skew = 10 * time.Minute
	ins := startInstances(t, 2, time.Now, func() time.Time { return time.Now().Add(skew) })
	ctx := harness.Ctx(t)
	b0, b1 := blobClient(t, ins[0].blob), blobClient(t, ins[1].blob)
	_, err := b0.CreateContainer(ctx, "skew", nil)
	must(t, err)

	// Last-Modified set by the skewed instance.
	bb1 := b1.ServiceClient().NewContainerClient("skew").NewBlockBlobClient("b")
	before := time.Now()
	_, err = bb1.UploadBuffer(ctx, []byte("x"), nil)
	must(t, err)
	p, err := b0.ServiceClient().NewContainerClient("skew").NewBlockBlobClient("b").GetProperties(ctx, nil)
	must(t, err)
	if lm := *p.LastModified; lm.Before(before.Add(-2*time.Second)) || lm.After(time.Now().Add(2*time.Second)) {
		t.Errorf("Last-Modified %v set by the skewed instance, want about %v", lm, before)
	}

	// A 15 s lease from instance 0 is still held when instance 1 (whose
	// own clock says it expired long ago) is asked for it.
	lc0, err := lease.NewBlobClient(b0.ServiceClient().NewContainerClient("skew").NewBlockBlobClient("b"), nil)
	must(t, err)
	_, err = lc0.AcquireLease(ctx, 15, nil)
	must(t, err)
	lc1, err := lease.NewBlobClient(bb1, nil)
	must(t, err)
	_, err = lc1.AcquireLease(ctx, 15, nil)
	if st, code := errorCode(err); st != 409 || code != "LeaseAlreadyPresent" {
		t.Errorf("second acquire through the skewed instance: %v, want 409 LeaseAlreadyPresent", err)
	}

	// A message handed out by instance 0 for 60 s is not visible to 1.
	q0, q1 := queueClient(t, ins[0].queue), queueClient(t, ins[1].queue)
	_, err = q0.CreateQueue(ctx, "skew", nil)
	must(t, err)
	_, err = q0.NewQueueClient("skew").EnqueueMessage(ctx, "m", nil)
	must(t, err)
	got, err := q0.NewQueueClient("skew").DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: ptr(int32(60))})
	must(t, err)
	if len(got.Messages) != 1 {
		t.Fatalf("dequeue: %d messages", len(got.Messages))
	}
	again, err := q1.NewQueueClient("skew").DequeueMessage(ctx, nil)
	must(t, err)
	if len(again.Messages) != 0 {
		t.Errorf("the skewed instance handed out a message still invisible")
	}

	// A SAS valid for two more minutes works on the skewed instance.
	u, err := bb1.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(2*time.Minute), nil)
	must(t, err)
	sasURL := strings.Replace(u, ins[0].blob, ins[1].blob, 1)
	resp, err := http.Get(sasURL)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET with a SAS valid two more minutes through the skewed instance: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

// TestSnapshotReadsAcrossInstances: batches on two instances keep two
// entities of a partition equal; queries of the partition on a third
// instance always see them equal.
func TestSnapshotReadsAcrossInstances(t *testing.T) {
	ins := startInstances(t, 3)
	ctx := harness.Ctx(t)
	const table = "snap"
	c0 := tableClient(t, ins[0].table, table)
	_, err := c0.CreateTable(ctx, nil)
	must(t, err)
	put := func(c *aztables.Client, v int) error {
		var actions []aztables.TransactionAction
		for _, rk := range []string{"a", "b"} {
			e := fmt.Sprintf(`{"PartitionKey":"p","RowKey":%q,"V":%d}`, rk, v)
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeUpdateReplace, Entity: []byte(e)})
		}
		_, err := c.SubmitTransaction(ctx, actions, nil)
		return err
	}
	must(t, put(c0, 0))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := 1; w <= 2; w++ {
		c := tableClient(t, ins[w].table, table)
		wg.Go(func() {
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := put(c, w*1_000_000+i); err != nil {
					if st, _ := errorCode(err); st != 503 {
						t.Errorf("batch on instance %d: %v", w, err)
						return
					}
				}
				writes.Add(1)
			}
		})
	}
	reads := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); reads++ {
		pager := c0.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: ptr("PartitionKey eq 'p'")})
		page, err := pager.NextPage(ctx)
		must(t, err)
		if len(page.Entities) != 2 {
			t.Fatalf("query saw %d entities", len(page.Entities))
		}
		var vs [2]string
		for i, e := range page.Entities {
			s := string(e)
			vs[i] = s[strings.Index(s, `"V":`):]
			vs[i], _, _ = strings.Cut(vs[i], ",")
			vs[i], _, _ = strings.Cut(vs[i], "}")
		}
		if vs[0] != vs[1] {
			t.Fatalf("query on instance 0 saw a torn batch: %s vs %s", vs[0], vs[1])
		}
	}
	close(stop)
	wg.Wait()
	if writes.Load() < 10 || reads < 10 {
		t.Fatalf("too little overlap: %d batches, %d queries", writes.Load(), reads)
	}
	t.Logf("%d batches on instances 1 and 2, %d consistent queries on instance 0", writes.Load(), reads)
}

// TestETagsAndLastModifiedAcrossInstances: writers on three instances
// (one clock five minutes ahead, one five minutes behind) overwrite one
// blob at once. Every acknowledged write has its own ETag, and in the
// order of the ETags (each write's is above the one it replaced),
// Last-Modified never goes back and stays on the real time.
func TestETagsAndLastModifiedAcrossInstances(t *testing.T) {
	ins := startInstances(t, 3, time.Now,
		func() time.Time { return time.Now().Add(5 * time.Minute) },
		func() time.Time { return time.Now().Add(-5 * time.Minute) })
	ctx := harness.Ctx(t)
	_, err := blobClient(t, ins[0].blob).CreateContainer(ctx, "stamps", nil)
	must(t, err)
	type stamp struct {
		etag uint64
		lm   time.Time
	}
	var mu sync.Mutex
	var stamps []stamp
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 6 {
		bb := blobClient(t, ins[w%3].blob).ServiceClient().NewContainerClient("stamps").NewBlockBlobClient("b")
		wg.Go(func() {
			for i := range 25 {
				r, err := bb.UploadBuffer(ctx, []byte(fmt.Sprint(w, i)), nil)
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				var e uint64
				if _, err := fmt.Sscanf(string(*r.ETag), "\"0x%X\"", &e); err != nil {
					t.Errorf("ETag %s: %v", *r.ETag, err)
					return
				}
				mu.Lock()
				stamps = append(stamps, stamp{e, *r.LastModified})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	end := time.Now()
	slices.SortFunc(stamps, func(a, b stamp) int { return cmp.Compare(a.etag, b.etag) })
	for i, s := range stamps {
		if i > 0 && s.etag == stamps[i-1].etag {
			t.Fatalf("two writes got ETag %X", s.etag)
		}
		if i > 0 && s.lm.Before(stamps[i-1].lm) {
			t.Fatalf("Last-Modified went back from %v to %v between ETags %X and %X", stamps[i-1].lm, s.lm, stamps[i-1].etag, s.etag)
		}
		// Last-Modified has one-second resolution.
		if s.lm.Before(start.Truncate(time.Second)) || s.lm.After(end.Add(time.Second)) {
			t.Fatalf("Last-Modified %v outside the run [%v, %v]", s.lm, start, end)
		}
	}
	if len(stamps) != 150 {
		t.Fatalf("%d acknowledged writes, want 150", len(stamps))
	}
}
