package blob_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func ifMatch(e azcore.ETag) *blob.AccessConditions {
	return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &e}}
}

func ifNoneMatch(e azcore.ETag) *blob.AccessConditions {
	return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &e}}
}

func TestConditionalHeaders(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("cond")
		up, err := bb.Upload(ctx, body([]byte("v1")), nil)
		must(t, err)
		etag := *up.ETag
		lmt := *up.LastModified
		// Reads.
		_, err = bb.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: ifMatch(etag)})
		must(t, err)
		_, err = bb.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: ifMatch(`"0x1"`)})
		mustStatus(t, err, 412)
		_, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: ifMatch(`"0x1"`)})
		mustCode(t, err, 412, "ConditionNotMet")
		// (The SDK's Get Blob accepts 304 as success; Get Blob Properties
		// does not, so 304s are checked there and with raw GETs below.)
		_, err = bb.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: ifNoneMatch(etag)})
		mustStatus(t, err, 304)
		_, err = bb.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: ifNoneMatch(azcore.ETagAny)})
		mustStatus(t, err, 400)
		ims := func(t time.Time) *blob.AccessConditions {
			return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfModifiedSince: &t}}
		}
		ius := func(t time.Time) *blob.AccessConditions {
			return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfUnmodifiedSince: &t}}
		}
		_, err = bb.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: ims(lmt)})
		mustStatus(t, err, 304)
		_, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: ims(lmt.Add(-time.Second))})
		must(t, err)
		_, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: ius(lmt)})
		must(t, err)
		_, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: ius(lmt.Add(-time.Second))})
		mustCode(t, err, 412, "ConditionNotMet")
		// Writes.
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: ifMatch(`"0x1"`)})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: ifNoneMatch(etag)})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: ius(lmt.Add(-time.Second))})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: ims(lmt)})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = bb.Delete(ctx, &blob.DeleteOptions{AccessConditions: ifMatch(`"0x1"`)})
		mustCode(t, err, 412, "ConditionNotMet")
		// If-None-Match: * on a create over an existing blob is 409.
		_, err = bb.Upload(ctx, body([]byte("v2")), &blockblob.UploadOptions{AccessConditions: ifNoneMatch(azcore.ETagAny)})
		mustCode(t, err, 409, "BlobAlreadyExists")
		_, err = bb.CommitBlockList(ctx, nil, &blockblob.CommitBlockListOptions{AccessConditions: ifNoneMatch(azcore.ETagAny)})
		mustCode(t, err, 409, "BlobAlreadyExists")
		_, err = e.cc.NewBlockBlobClient("fresh").Upload(ctx, body([]byte("v")), &blockblob.UploadOptions{AccessConditions: ifNoneMatch(azcore.ETagAny)})
		must(t, err)
		// If-Match on a missing blob fails a create.
		_, err = e.cc.NewBlockBlobClient("absent").Upload(ctx, body([]byte("v")), &blockblob.UploadOptions{AccessConditions: ifMatch(azcore.ETagAny)})
		mustCode(t, err, 412, "ConditionNotMet")
		sm, err := bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: ifMatch(etag)})
		must(t, err)
		if *sm.ETag == etag {
			t.Fatal("ETag unchanged")
		}
		// The blob is unchanged by every failed write.
		got, err := bb.DownloadStream(ctx, nil)
		must(t, err)
		if string(readAll(t, got.Body)) != "v1" {
			t.Fatal("content changed")
		}
	})
}

// TestConditionCombinationsOnWrites pins 400 MultipleConditionHeadersNotSupported
// for combinations a write does not accept, and the two allowed pairs.
func TestConditionCombinationsOnWrites(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		up, err := e.cc.NewBlockBlobClient("b").Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		lmt := up.LastModified.UTC().Format(http.TimeFormat)
		etag := string(*up.ETag)
		for _, tc := range []struct {
			h      map[string]string
			status int
			code   string
		}{
			{map[string]string{"If-Match": etag, "If-None-Match": `"0x1"`}, 400, "MultipleConditionHeadersNotSupported"},
			{map[string]string{"If-Match": etag, "If-Modified-Since": lmt}, 400, "MultipleConditionHeadersNotSupported"},
			{map[string]string{"If-Modified-Since": lmt, "If-Unmodified-Since": lmt}, 400, "MultipleConditionHeadersNotSupported"},
			{map[string]string{"If-Match": etag, "If-Unmodified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"}, 200, ""},
			{map[string]string{"If-None-Match": `"0x1"`, "If-Modified-Since": "Mon, 01 Jan 2035 00:00:00 GMT"}, 200, ""},
		} {
			resp := raw(t, tg, http.MethodPut, e.name+"/b?comp=metadata", tc.h, nil)
			expectStatus(t, resp, tc.status, tc.code)
			if tc.status == 200 {
				etag = resp.Header.Get("ETag")
				lmt = resp.Header.Get("Last-Modified")
			}
		}
		// Reads accept any combination; 412 wins over 304.
		resp := raw(t, tg, http.MethodGet, e.name+"/b", map[string]string{"If-Match": `"0x1"`, "If-None-Match": etag}, nil)
		expectStatus(t, resp, 412, "ConditionNotMet")
		resp = raw(t, tg, http.MethodGet, e.name+"/b", map[string]string{"If-Match": etag, "If-None-Match": etag}, nil)
		if resp.StatusCode != 304 || len(readAll(t, resp.Body)) != 0 {
			t.Fatalf("304 expected without body, got %d", resp.StatusCode)
		}
		// Two values of a date header.
		resp = raw(t, tg, http.MethodGet, e.name+"/b", map[string]string{"If-Modified-Since": lmt + ", " + lmt}, nil)
		expectStatus(t, resp, 400, "InvalidHeaderValue")
	})
}

func mustStatus(t *testing.T, err error, status int) {
	t.Helper()
	var re *azcore.ResponseError
	if !errorsAs(err, &re) || re.StatusCode != status {
		t.Fatalf("got %v, want status %d", err, status)
	}
}

// TestRaceIfMatchWriters: of N writers using the same ETag exactly one wins.
func TestRaceIfMatchWriters(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("race")
		up, err := bb.Upload(ctx, body([]byte("start")), nil)
		must(t, err)
		const n = 16
		var wins, fails atomic.Int32
		var wg sync.WaitGroup
		g := newStartGate(n)
		var winner atomic.Int32
		var winETag atomic.Pointer[azcore.ETag]
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				g.wait()
				var err error
				var etag *azcore.ETag
				if i%2 == 0 {
					var r blockblob.UploadResponse
					r, err = bb.Upload(context.Background(), body([]byte(fmt.Sprint("w", i))), &blockblob.UploadOptions{AccessConditions: ifMatch(*up.ETag)})
					etag = r.ETag
				} else {
					var r blob.SetMetadataResponse
					r, err = bb.SetMetadata(context.Background(), map[string]*string{"w": ptr(fmt.Sprint(i))}, &blob.SetMetadataOptions{AccessConditions: ifMatch(*up.ETag)})
					etag = r.ETag
				}
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(int32(i))
					winETag.Store(etag)
				case isCode(err, 412, "ConditionNotMet"):
					fails.Add(1)
				default:
					t.Error(err)
				}
			}(i)
		}
		g.open()
		wg.Wait()
		if wins.Load() != 1 || fails.Load() != n-1 {
			t.Fatalf("wins %d, 412s %d", wins.Load(), fails.Load())
		}
		// The blob holds the winner's write and the ETag it was given.
		got, err := bb.DownloadStream(ctx, nil)
		must(t, err)
		data := string(readAll(t, got.Body))
		w := int(winner.Load())
		if *got.ETag != *winETag.Load() {
			t.Fatalf("stored ETag %s, winner was given %s", *got.ETag, *winETag.Load())
		}
		if w%2 == 0 && data != fmt.Sprint("w", w) || w%2 == 1 && (data != "start" || got.Metadata["W"] == nil && got.Metadata["w"] == nil) {
			t.Fatalf("winner %d, blob holds %q %v", w, data, got.Metadata)
		}
	})
}

// TestRaceReadModifyWrite: concurrent If-Match increment loops lose no
// increment.
func TestRaceReadModifyWrite(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("counter")
		_, err := bb.Upload(ctx, body([]byte("0")), nil)
		must(t, err)
		const workers, each = 6, 8
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for done := 0; done < each; {
					got, err := bb.DownloadStream(context.Background(), nil)
					if err != nil {
						t.Error(err)
						return
					}
					var buf bytes.Buffer
					buf.ReadFrom(got.Body)
					got.Body.Close()
					n, _ := strconv.Atoi(buf.String())
					_, err = bb.Upload(context.Background(), body([]byte(strconv.Itoa(n+1))), &blockblob.UploadOptions{AccessConditions: ifMatch(*got.ETag)})
					if err == nil {
						done++
						continue
					}
					if !isCode(err, 412, "ConditionNotMet") {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		got, err := bb.DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != strconv.Itoa(workers*each) {
			t.Fatalf("counter %s, want %d", s, workers*each)
		}
	})
}

// TestRaceAppendPosition: concurrent appends with appendpos never overlap;
// every accepted block lands exactly at its position.
func TestRaceAppendPosition(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		ab := e.cc.NewAppendBlobClient("log")
		_, err := ab.Create(ctx, nil)
		must(t, err)
		const workers, each, size = 6, 6, 16
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for done := 0; done < each; {
					p, err := ab.GetProperties(context.Background(), nil)
					if err != nil {
						t.Error(err)
						return
					}
					pos := *p.ContentLength
					rec := []byte(fmt.Sprintf("%02d:%012d\n", w, pos))
					r, err := ab.AppendBlock(context.Background(), body(rec), &appendblob.AppendBlockOptions{
						AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: &pos}})
					if err == nil {
						if *r.BlobAppendOffset != strconv.FormatInt(pos, 10) {
							t.Errorf("append offset %s, want %d", *r.BlobAppendOffset, pos)
						}
						done++
						continue
					}
					if !isCode(err, 412, "AppendPositionConditionNotMet") {
						t.Error(err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		got, err := ab.DownloadStream(ctx, nil)
		must(t, err)
		data := readAll(t, got.Body)
		if len(data) != workers*each*size {
			t.Fatalf("length %d", len(data))
		}
		for off := 0; off < len(data); off += size {
			var w int
			var pos int64
			if _, err := fmt.Sscanf(string(data[off:off+size]), "%02d:%012d\n", &w, &pos); err != nil || pos != int64(off) {
				t.Fatalf("record at %d: %q", off, data[off:off+size])
			}
		}
		p, err := ab.GetProperties(ctx, nil)
		must(t, err)
		if *p.BlobCommittedBlockCount != workers*each {
			t.Fatalf("committed blocks %d", *p.BlobCommittedBlockCount)
		}
	})
}

func blockID(i int) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("blk-%06d", i)))
}

// TestRacePutBlockListVsPutBlob: a commit racing a single-shot upload
// leaves one whole version, never a mix.
func TestRacePutBlockListVsPutBlob(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		for round := 0; round < 8; round++ {
			bb := e.cc.NewBlockBlobClient(fmt.Sprint("mix", round))
			var ids []string
			var want bytes.Buffer
			for i := 0; i < 4; i++ {
				part := bytes.Repeat([]byte{byte('a' + i)}, 1000)
				want.Write(part)
				ids = append(ids, blockID(i))
				_, err := bb.StageBlock(ctx, ids[i], body(part), nil)
				must(t, err)
			}
			single := bytes.Repeat([]byte{'Z'}, 3000)
			var wg sync.WaitGroup
			wg.Add(2)
			g := newStartGate(2)
			var commitETag, uploadETag *azcore.ETag
			go func() {
				defer wg.Done()
				g.wait()
				r, err := bb.CommitBlockList(context.Background(), ids, nil)
				if err != nil && !isCode(err, 400, "InvalidBlockList") {
					t.Error(err)
				}
				commitETag = r.ETag
			}()
			go func() {
				defer wg.Done()
				g.wait()
				r, err := bb.Upload(context.Background(), body(single), nil)
				if err != nil {
					t.Error(err)
				}
				uploadETag = r.ETag
			}()
			g.open()
			wg.Wait()
			got, err := bb.DownloadStream(ctx, nil)
			must(t, err)
			data := readAll(t, got.Body)
			if !bytes.Equal(data, single) && !bytes.Equal(data, want.Bytes()) {
				t.Fatalf("mixed content of length %d", len(data))
			}
			// The stored ETag is the one the write whose content won was given.
			switch {
			case bytes.Equal(data, single) && (uploadETag == nil || *got.ETag != *uploadETag):
				t.Fatalf("uploaded content under ETag %s", *got.ETag)
			case bytes.Equal(data, want.Bytes()) && (commitETag == nil || *got.ETag != *commitETag):
				t.Fatalf("committed content under ETag %s", *got.ETag)
			}
		}
	})
}

// TestRaceReadDuringOverwrite: a download running while the blob is
// overwritten returns the whole old or the whole new content, including
// multi-block blobs read in ranges with If-Match.
func TestRaceReadDuringOverwrite(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("hot")
		const blocks, bsize = 4, 64 << 10
		version := func(v byte) []byte { return bytes.Repeat([]byte{v}, blocks*bsize) }
		put := func(v byte) {
			var ids []string
			for i := 0; i < blocks; i++ {
				id := blockID(int(v)*100 + i)
				ids = append(ids, id)
				if _, err := bb.StageBlock(context.Background(), id, body(bytes.Repeat([]byte{v}, bsize)), nil); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := bb.CommitBlockList(context.Background(), ids, nil); err != nil {
				t.Error(err)
			}
		}
		put('A')
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := byte('B'); ; v++ {
				select {
				case <-stop:
					return
				default:
				}
				if v > 'Y' {
					v = 'B'
				}
				put(v)
			}
		}()
		for i := 0; i < 20; i++ {
			// Whole reads.
			got, err := bb.DownloadStream(ctx, nil)
			must(t, err)
			data := readAll(t, got.Body)
			if len(data) != blocks*bsize || !bytes.Equal(data, version(data[0])) {
				t.Fatalf("torn read")
			}
			// Ranged reads pinned with If-Match: all ranges of one version or 412.
			p, err := bb.GetProperties(ctx, nil)
			must(t, err)
			var buf bytes.Buffer
			torn := false
			for off := int64(0); off < blocks*bsize; off += 100_000 {
				r, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: 100_000}, AccessConditions: ifMatch(*p.ETag)})
				if isCode(err, 412, "ConditionNotMet") {
					torn = true
					break
				}
				must(t, err)
				buf.Write(readAll(t, r.Body))
			}
			if !torn && !bytes.Equal(buf.Bytes(), version(buf.Bytes()[0])) {
				t.Fatal("ranged reads with If-Match mixed versions")
			}
		}
		close(stop)
		wg.Wait()
	})
}

// TestRaceCreateOnlyOnce: of N creators using If-None-Match: * exactly one
// creates the blob and the rest get 409; of N Create Container calls
// exactly one succeeds.
func TestRaceCreateOnlyOnce(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		const n = 12
		var wins, conflicts atomic.Int32
		var cwins, cconflicts atomic.Int32
		cname := harness.UniqueName("race")
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(2)
			go func(i int) {
				defer wg.Done()
				_, err := e.cc.NewBlockBlobClient("once").Upload(context.Background(), body([]byte(fmt.Sprint(i))),
					&blockblob.UploadOptions{AccessConditions: ifNoneMatch(azcore.ETagAny)})
				switch {
				case err == nil:
					wins.Add(1)
				case isCode(err, 409, "BlobAlreadyExists"):
					conflicts.Add(1)
				default:
					t.Error(err)
				}
			}(i)
			go func() {
				defer wg.Done()
				_, err := e.c.CreateContainer(context.Background(), cname, nil)
				switch {
				case err == nil:
					cwins.Add(1)
				case isCode(err, 409, "ContainerAlreadyExists"):
					cconflicts.Add(1)
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 || conflicts.Load() != n-1 || cwins.Load() != 1 || cconflicts.Load() != n-1 {
			t.Fatalf("blob %d/%d, container %d/%d", wins.Load(), conflicts.Load(), cwins.Load(), cconflicts.Load())
		}
	})
}

// TestRaceStagingAndSnapshots: concurrent Put Block calls all land, and
// concurrent snapshots all get distinct ids.
func TestRaceStagingAndSnapshots(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("staged")
		const n = 12
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if _, err := bb.StageBlock(context.Background(), blockID(i), body([]byte{byte('a' + i)}), nil); err != nil {
					t.Error(err)
				}
			}(i)
		}
		wg.Wait()
		bl, err := bb.GetBlockList(ctx, blockblob.BlockListTypeUncommitted, nil)
		must(t, err)
		if len(bl.UncommittedBlocks) != n {
			t.Fatalf("%d staged blocks", len(bl.UncommittedBlocks))
		}
		var ids []string
		for i := 0; i < n; i++ {
			ids = append(ids, blockID(i))
		}
		_, err = bb.CommitBlockList(ctx, ids, nil)
		must(t, err)
		var mu sync.Mutex
		snaps := map[string]bool{}
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := bb.CreateSnapshot(context.Background(), nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				snaps[*s.Snapshot] = true
				mu.Unlock()
			}()
		}
		wg.Wait()
		if len(snaps) != n {
			t.Fatalf("%d distinct snapshots of %d", len(snaps), n)
		}
	})
}
