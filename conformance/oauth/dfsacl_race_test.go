package oauth_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/storage"
)

// Access states of the race: the client knows the ACL grants, is being
// changed (either way: nothing can be said), or revokes.
const (
	aclGranted int32 = iota
	aclChanging
	aclRevoked
)

// witness is an engine that records, for each request, whether one of its
// transactions that committed began once the revocation was acknowledged:
// such a transaction saw the revoked ACL, so the request must have been
// refused. It also waits a little before each transaction, which widens
// the gap between two transactions of one request (a check made in one
// and an operation run in the next) so that a revocation lands in it.
type witness struct {
	storage.Engine
	state atomic.Int32
	mu    sync.Mutex
	saw   map[string]bool // request id -> a committed transaction saw the revocation
}

func (w *witness) View(ctx context.Context, fn func(storage.Tx) error) error {
	return w.run(ctx, fn, w.Engine.View)
}

func (w *witness) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return w.run(ctx, fn, w.Engine.Update)
}

func (w *witness) run(ctx context.Context, fn func(storage.Tx) error, tx func(context.Context, func(storage.Tx) error) error) error {
	time.Sleep(time.Millisecond)
	// An Update may run fn more than once: the last run is the one that
	// counts.
	var revoked bool
	err := tx(ctx, func(t storage.Tx) error {
		revoked = w.state.Load() == aclRevoked
		return fn(t)
	})
	if info := httpx.FromContext(ctx); err == nil && revoked && info != nil {
		w.mu.Lock()
		w.saw[info.RequestID] = true
		w.mu.Unlock()
	}
	return err
}

func (w *witness) sawRevoked(requestID string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.saw[requestID]
}

// raceEngines are the engines of the selected conformance targets.
func raceEngines() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range harness.Names() {
		kind, _, _ := strings.Cut(n, "-")
		if kind == "postgres3" || kind == "remote" || seen[kind] {
			continue
		}
		seen[kind] = true
		out = append(out, kind)
	}
	return out
}

func openEngine(t *testing.T, kind string) storage.Engine {
	t.Helper()
	var eng storage.Engine
	var err error
	switch kind {
	case "mem":
		eng = memstore.New()
	case "log":
		eng, err = logstore.Open(logstore.Options{Dir: t.TempDir()})
	case "sqlite":
		eng, err = sqlitestore.Open(sqlitestore.Options{Dir: t.TempDir()})
	case "postgres":
		eng, err = pgstore.Open(context.Background(), pgstore.Options{URL: pgtest.NewDatabase(t)})
	default:
		t.Fatalf("unknown engine %q", kind)
	}
	must(t, err)
	t.Cleanup(func() { eng.Close() })
	return eng
}

// raceClass is one class of request raced against a revocation: send
// makes request i of worker g.
type raceClass struct {
	name string
	send func(s *server, g, i int) (*http.Request, error)
}

// blobReq is a request of alice's on the Blob endpoint.
func blobReq(s *server, method, path string, body string, hd map[string]string) (*http.Request, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url("blob")+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+principal(aliceOID, nil, nil).jwt())
	req.Header.Set("X-Ms-Version", "2023-11-03")
	for k, v := range hd {
		req.Header.Set(k, v)
	}
	return req, nil
}

var raceClasses = []raceClass{
	{"PathCreate", func(s *server, g, i int) (*http.Request, error) {
		return blobReq(s, http.MethodPut, fmt.Sprintf("race/d/new-%d-%d?resource=file", g, i), "", nil)
	}},
	{"GetBlob", func(s *server, g, i int) (*http.Request, error) {
		return blobReq(s, http.MethodGet, "race/d/f.txt", "", nil)
	}},
	{"GetBlobProperties", func(s *server, g, i int) (*http.Request, error) {
		return blobReq(s, http.MethodHead, "race/d/f.txt", "", nil)
	}},
	{"SetBlobMetadata", func(s *server, g, i int) (*http.Request, error) {
		return blobReq(s, http.MethodPut, "race/d/f.txt?comp=metadata", "", map[string]string{"X-Ms-Meta-Round": fmt.Sprint(i)})
	}},
	{"PutBlock", func(s *server, g, i int) (*http.Request, error) {
		id := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%08d", g*1_000_000+i)))
		// Staged under a new name: a file Path - Create made takes no
		// blocks (409 BlobOperationNotSupported).
		return blobReq(s, http.MethodPut, "race/d/staged.bin?comp=block&blockid="+url.QueryEscape(id), "block", nil)
	}},
	{"AppendBlock", func(s *server, g, i int) (*http.Request, error) {
		return blobReq(s, http.MethodPut, "race/d/log.txt?comp=appendblock", "line\n", nil)
	}},
	{"PathLease", func(s *server, g, i int) (*http.Request, error) {
		// Acquiring the lease it holds again succeeds.
		return blobReq(s, http.MethodPost, "race/d/leased.txt", "", map[string]string{
			"X-Ms-Lease-Action": "acquire", "X-Ms-Lease-Duration": "-1", "X-Ms-Proposed-Lease-Id": "3f2504e0-4f89-11d3-9a0c-0305e82c3301"})
	}},
	{"ListBlobs", func(s *server, g, i int) (*http.Request, error) {
		return blobReq(s, http.MethodGet, "race?restype=container&comp=list&prefix=d/", "", nil)
	}},
}

// An ACL revocation races every class of request an OAuth caller makes on
// an HNS account: creates, Blob reads and property reads, Blob writes,
// staged blocks, appends, path leases and List Blobs. No request succeeds
// whose transaction began once the revocation was acknowledged, on every
// engine: the check runs in the operation's own transaction, not in a
// snapshot taken before it.
func TestDataLakeACLChangeRacesRequests(t *testing.T) {
	for _, kind := range raceEngines() {
		t.Run(kind, func(t *testing.T) {
			w := &witness{Engine: openEngine(t, kind), saw: map[string]bool{}}
			s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true, Engine: w})
			ctx := context.Background()
			l := newLake(t, s, "race")
			setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,user:"+aliceOID+":--x,group::r-x,mask::r-x,other::---")
			granted := "user::rwx,user:" + aliceOID + ":rwx,group::r-x,mask::rwx,other::---"
			revoked := "user::rwx,group::r-x,other::---"
			d := l.admin.NewDirectoryClient("d")
			_, err := d.Create(ctx, nil)
			must(t, err)
			// Alice may read and write the files; the race revokes her
			// access to d, the directory above them.
			for _, f := range []string{"d/f.txt", "d/log.txt", "d/leased.txt"} {
				fc := l.admin.NewFileClient(f)
				_, err := fc.Create(ctx, nil)
				must(t, err)
				_, err = fc.SetAccessControl(ctx, &file.SetAccessControlOptions{ACL: to.Ptr(granted)})
				must(t, err)
			}
			// log.txt becomes an append blob.
			req, err := blobReq(s, http.MethodPut, "race/d/log.txt", "", map[string]string{"X-Ms-Blob-Type": "AppendBlob"})
			must(t, err)
			req.Header.Set("Authorization", "Bearer "+principal(aliceOID, nil, []string{"Storage Blob Data Owner"}).jwt())
			resp, err := s.transport.Do(req)
			must(t, err)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("create append blob: %d", resp.StatusCode)
			}
			for _, c := range raceClasses {
				t.Run(c.name, func(t *testing.T) { raceRevocation(t, s, w, d, c, granted, revoked) })
			}
		})
	}
}

// raceRevocation runs rounds of: grant, requests succeed, revoke while
// they go on, requests are refused.
func raceRevocation(t *testing.T, s *server, w *witness, d *directory.Client, c raceClass, granted, revoked string) {
	const workers, rounds = 6, 3
	var ok, refusedN, late atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				req, err := c.send(s, g, i)
				if err != nil {
					t.Error(err)
					return
				}
				resp, err := s.transport.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode < 300:
					ok.Add(1)
					if w.sawRevoked(resp.Header.Get("X-Ms-Request-Id")) {
						late.Add(1)
					}
				case resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-Ms-Error-Code") == "AuthorizationPermissionMismatch":
					refusedN.Add(1)
				default:
					t.Errorf("%s: %d %s", c.name, resp.StatusCode, resp.Header.Get("X-Ms-Error-Code"))
					return
				}
			}
		}(g)
	}
	change := func(acl string, to int32) {
		w.state.Store(aclChanging)
		setACL(t, d, acl)
		w.state.Store(to)
	}
	waitFor := func(n *atomic.Int64, want int64) {
		for deadline := time.Now().Add(20 * time.Second); n.Load() < want && time.Now().Before(deadline) && !t.Failed(); {
			time.Sleep(time.Millisecond)
		}
	}
	for r := int64(1); r <= rounds; r++ {
		change(granted, aclGranted)
		waitFor(&ok, 10*r+ok.Load())
		change(revoked, aclRevoked)
		waitFor(&refusedN, 10*r)
	}
	stop.Store(true)
	wg.Wait()
	change(granted, aclGranted)
	if late.Load() != 0 {
		t.Fatalf("%s: %d requests succeeded whose transaction saw the revoked ACL", c.name, late.Load())
	}
	if ok.Load() < 10*rounds || refusedN.Load() < 10*rounds {
		t.Fatalf("%s: %d succeeded, %d refused", c.name, ok.Load(), refusedN.Load())
	}
}
