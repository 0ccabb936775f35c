package blob_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func TestBlockBlobs(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("blocks")
		ids := []string{blockID(1), blockID(2), blockID(3)}
		for i, id := range ids {
			_, err := bb.StageBlock(ctx, id, body([]byte(strings.Repeat(string(rune('a'+i)), 10))), nil)
			must(t, err)
		}
		// Staged blocks make an invisible blob.
		_, err := bb.GetProperties(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		bl, err := bb.GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
		must(t, err)
		if len(bl.UncommittedBlocks) != 3 || len(bl.CommittedBlocks) != 0 {
			t.Fatalf("block list %+v", bl.BlockList)
		}
		// Re-staging an id replaces it.
		_, err = bb.StageBlock(ctx, ids[1], body([]byte("BBBBBBBBBBBB")), nil)
		must(t, err)
		_, err = bb.CommitBlockList(ctx, []string{ids[0], ids[1]}, &blockblob.CommitBlockListOptions{
			HTTPHeaders: &blob.HTTPHeaders{BlobContentType: ptr("text/x")}, Metadata: map[string]*string{"m": ptr("1")}})
		must(t, err)
		got, err := bb.DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "aaaaaaaaaaBBBBBBBBBBBB" || *got.ContentType != "text/x" {
			t.Fatalf("content %q %s", s, *got.ContentType)
		}
		bl, err = bb.GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
		must(t, err)
		if len(bl.CommittedBlocks) != 2 || len(bl.UncommittedBlocks) != 0 || *bl.CommittedBlocks[1].Size != 12 {
			t.Fatalf("after commit: %d committed, %d uncommitted", len(bl.CommittedBlocks), len(bl.UncommittedBlocks))
		}
		// Reorder committed blocks and add a new one (Latest = uncommitted first).
		_, err = bb.StageBlock(ctx, ids[2], body([]byte("cc")), nil)
		must(t, err)
		_, err = bb.CommitBlockList(ctx, []string{ids[2], ids[1], ids[0], ids[0]}, nil)
		must(t, err)
		got, err = bb.DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "ccBBBBBBBBBBBBaaaaaaaaaaaaaaaaaaaa" {
			t.Fatalf("content %q", s)
		}
		// Unknown block.
		_, err = bb.CommitBlockList(ctx, []string{blockID(9)}, nil)
		mustCode(t, err, 400, "InvalidBlockList")
		// Block ids of different lengths among the uncommitted ones.
		_, err = bb.StageBlock(ctx, ids[2], body([]byte("cc")), nil)
		must(t, err)
		_, err = bb.StageBlock(ctx, "YWJj", body([]byte("x")), nil)
		mustCode(t, err, 400, "InvalidBlobOrBlock")
		// Not base64.
		resp := raw(t, tg, http.MethodPut, e.name+"/blocks?comp=block&blockid=%21%21", nil, []byte("x"))
		expectStatus(t, resp, 400, "InvalidQueryParameterValue")
		// Malformed block list XML.
		resp = raw(t, tg, http.MethodPut, e.name+"/blocks?comp=blocklist", nil, []byte("<BlockList><Latest>"))
		expectStatus(t, resp, 400, "InvalidXmlDocument")
		// Put Blob drops staged blocks.
		_, err = bb.StageBlock(ctx, ids[0], body([]byte("zz")), nil)
		must(t, err)
		_, err = bb.Upload(ctx, body([]byte("single")), nil)
		must(t, err)
		bl, err = bb.GetBlockList(ctx, blockblob.BlockListTypeUncommitted, nil)
		must(t, err)
		if len(bl.UncommittedBlocks) != 0 {
			t.Fatal("staged blocks survived Put Blob")
		}
		// Put Block does not change the blob's ETag.
		p1, err := bb.GetProperties(ctx, nil)
		must(t, err)
		_, err = bb.StageBlock(ctx, ids[0], body([]byte("zz")), nil)
		must(t, err)
		p2, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if *p1.ETag != *p2.ETag {
			t.Fatal("Put Block changed the ETag")
		}
		// Put Block on an append blob.
		ab := e.cc.NewAppendBlobClient("app")
		_, err = ab.Create(ctx, nil)
		must(t, err)
		_, err = e.cc.NewBlockBlobClient("app").StageBlock(ctx, ids[0], body([]byte("x")), nil)
		mustCode(t, err, 409, "InvalidBlobType")
		// Large upload split into blocks by the SDK.
		big := bytes.Repeat([]byte("0123456789abcdef"), 300_000)
		_, err = e.cc.NewBlockBlobClient("big").UploadBuffer(ctx, big, &blockblob.UploadBufferOptions{BlockSize: 1 << 20, Concurrency: 4})
		must(t, err)
		buf := make([]byte, len(big))
		_, err = e.cc.NewBlobClient("big").DownloadBuffer(ctx, buf, &blob.DownloadBufferOptions{BlockSize: 1 << 20, Concurrency: 4})
		must(t, err)
		if !bytes.Equal(buf, big) {
			t.Fatal("big blob differs")
		}
		// Many small blocks (a long block list).
		many := e.cc.NewBlockBlobClient("many")
		var manyIDs []string
		var manyWant []byte
		for i := 0; i < 40; i++ {
			part := bytes.Repeat([]byte{byte('A' + i%26)}, 100+i)
			manyIDs = append(manyIDs, blockID(1000+i))
			manyWant = append(manyWant, part...)
			_, err := many.StageBlock(ctx, manyIDs[i], body(part), nil)
			must(t, err)
		}
		_, err = many.CommitBlockList(ctx, manyIDs, nil)
		must(t, err)
		got, err = many.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 150, Count: 3000}})
		must(t, err)
		if !bytes.Equal(readAll(t, got.Body), manyWant[150:3150]) {
			t.Fatal("many-block blob differs")
		}
		bl, err = many.GetBlockList(ctx, blockblob.BlockListTypeCommitted, nil)
		must(t, err)
		if len(bl.CommittedBlocks) != 40 || *bl.CommittedBlocks[39].Size != 139 {
			t.Fatalf("%d committed blocks", len(bl.CommittedBlocks))
		}
	})
}

func TestSnapshotsAndDelete(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("s")
		up, err := bb.Upload(ctx, body([]byte("v1")), &blockblob.UploadOptions{Metadata: map[string]*string{"a": ptr("1")}})
		must(t, err)
		snap, err := bb.CreateSnapshot(ctx, nil)
		must(t, err)
		if *snap.ETag != *up.ETag {
			t.Fatal("snapshot changed the base ETag")
		}
		snap2, err := bb.CreateSnapshot(ctx, &blob.CreateSnapshotOptions{Metadata: map[string]*string{"b": ptr("2")}})
		must(t, err)
		if *snap2.Snapshot == *snap.Snapshot {
			t.Fatal("snapshot ids collide")
		}
		_, err = bb.Upload(ctx, body([]byte("v2")), nil)
		must(t, err)
		sc, err := bb.WithSnapshot(*snap.Snapshot)
		must(t, err)
		got, err := sc.DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "v1" || lookup(got.Metadata, "a") != "1" {
			t.Fatalf("snapshot content %q %v", s, got.Metadata)
		}
		sc2, _ := bb.WithSnapshot(*snap2.Snapshot)
		p2, err := sc2.GetProperties(ctx, nil)
		must(t, err)
		if lookup(p2.Metadata, "b") != "2" || lookup(p2.Metadata, "a") != "" {
			t.Fatalf("snapshot metadata %v", p2.Metadata)
		}
		// Snapshots are read-only.
		_, err = sc.SetMetadata(ctx, nil, nil)
		mustCode(t, err, 400, "InvalidOperation")
		// Listing with snapshots: oldest first, base last.
		pager := e.cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Snapshots: true}})
		page, err := pager.NextPage(ctx)
		must(t, err)
		var order []string
		for _, it := range page.Segment.BlobItems {
			s := ""
			if it.Snapshot != nil {
				s = *it.Snapshot
			}
			order = append(order, s)
		}
		if strings.Join(order, ",") != *snap.Snapshot+","+*snap2.Snapshot+"," {
			t.Fatalf("listing order %v", order)
		}
		// Delete without x-ms-delete-snapshots fails while snapshots exist.
		_, err = bb.Delete(ctx, nil)
		mustCode(t, err, 409, "SnapshotsPresent")
		_, err = bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: ptr(blob.DeleteSnapshotsOptionTypeOnly)})
		must(t, err)
		_, err = sc.GetProperties(ctx, nil)
		mustStatus(t, err, 404)
		_, err = bb.GetProperties(ctx, nil)
		must(t, err)
		_, err = bb.CreateSnapshot(ctx, nil)
		must(t, err)
		_, err = bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: ptr(blob.DeleteSnapshotsOptionTypeInclude)})
		must(t, err)
		_, err = bb.GetProperties(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		_, err = bb.Delete(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		// Delete one snapshot.
		_, err = bb.Upload(ctx, body([]byte("v3")), nil)
		must(t, err)
		s3, err := bb.CreateSnapshot(ctx, nil)
		must(t, err)
		sc3, _ := bb.WithSnapshot(*s3.Snapshot)
		_, err = sc3.Delete(ctx, nil)
		must(t, err)
		_, err = bb.Delete(ctx, nil)
		must(t, err)
	})
}

func TestPageBlobs(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		pb := e.cc.NewPageBlobClient("disk")
		_, err := pb.Create(ctx, 4096, &pageblob.CreateOptions{SequenceNumber: ptr(int64(7))})
		must(t, err)
		_, err = e.cc.NewPageBlobClient("odd").Create(ctx, 1000, nil)
		mustCode(t, err, 400, "InvalidHeaderValue")
		page := bytes.Repeat([]byte{'p'}, 1024)
		up, err := pb.UploadPages(ctx, body(page), blob.HTTPRange{Offset: 512, Count: 1024}, nil)
		must(t, err)
		if *up.BlobSequenceNumber != 7 {
			t.Fatalf("seq %d", *up.BlobSequenceNumber)
		}
		_, err = pb.UploadPages(ctx, body(page[:512]), blob.HTTPRange{Offset: 3072, Count: 512}, nil)
		must(t, err)
		// Unaligned writes are malformed (400); out-of-range ones 416.
		_, err = pb.UploadPages(ctx, body(page[:100]), blob.HTTPRange{Offset: 0, Count: 100}, nil)
		mustCode(t, err, 400, "InvalidHeaderValue")
		_, err = pb.UploadPages(ctx, body(page[:512]), blob.HTTPRange{Offset: 4096, Count: 512}, nil)
		mustCode(t, err, 416, "InvalidPageRange")
		ranges := func(o *pageblob.GetPageRangesOptions) string {
			p := pb.NewGetPageRangesPager(o)
			var out []string
			for p.More() {
				r, err := p.NextPage(ctx)
				must(t, err)
				for _, pr := range r.PageRange {
					out = append(out, fmt.Sprintf("%d-%d", *pr.Start, *pr.End))
				}
			}
			return strings.Join(out, ",")
		}
		if got := ranges(nil); got != "512-1535,3072-3583" {
			t.Fatalf("ranges %s", got)
		}
		// A range starting past the end is 416.
		_, err = pb.NewGetPageRangesPager(&pageblob.GetPageRangesOptions{Range: blob.HTTPRange{Offset: 4096, Count: 512}}).NextPage(ctx)
		mustCode(t, err, 416, "InvalidRange")
		snap, err := pb.CreateSnapshot(ctx, nil)
		must(t, err)
		_, err = pb.ClearPages(ctx, blob.HTTPRange{Offset: 1024, Count: 512}, nil)
		must(t, err)
		_, err = pb.UploadPages(ctx, body(page[:512]), blob.HTTPRange{Offset: 0, Count: 512}, nil)
		must(t, err)
		if got := ranges(nil); got != "0-1023,3072-3583" {
			t.Fatalf("ranges after clear %s", got)
		}
		// Content: zeros where nothing was written.
		got, err := pb.DownloadStream(ctx, nil)
		must(t, err)
		data := readAll(t, got.Body)
		if len(data) != 4096 || data[0] != 'p' || data[1024] != 0 || data[2048] != 0 || data[3072] != 'p' {
			t.Fatal("page content")
		}
		// Diff against the snapshot.
		dp := pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: snap.Snapshot})
		r, err := dp.NextPage(ctx)
		must(t, err)
		var changed, cleared []string
		for _, pr := range r.PageRange {
			changed = append(changed, fmt.Sprintf("%d-%d", *pr.Start, *pr.End))
		}
		for _, cr := range r.ClearRange {
			cleared = append(cleared, fmt.Sprintf("%d-%d", *cr.Start, *cr.End))
		}
		if strings.Join(changed, ",") != "0-511" || strings.Join(cleared, ",") != "1024-1535" {
			t.Fatalf("diff changed %v cleared %v", changed, cleared)
		}
		// Sequence numbers.
		_, err = pb.UploadPages(ctx, body(page[:512]), blob.HTTPRange{Offset: 0, Count: 512}, &pageblob.UploadPagesOptions{
			SequenceNumberAccessConditions: &pageblob.SequenceNumberAccessConditions{IfSequenceNumberLessThan: ptr(int64(7))}})
		mustCode(t, err, 412, "SequenceNumberConditionNotMet")
		_, err = pb.UpdateSequenceNumber(ctx, &pageblob.UpdateSequenceNumberOptions{ActionType: ptr(pageblob.SequenceNumberActionTypeIncrement)})
		must(t, err)
		_, err = pb.UpdateSequenceNumber(ctx, &pageblob.UpdateSequenceNumberOptions{ActionType: ptr(pageblob.SequenceNumberActionTypeMax), SequenceNumber: ptr(int64(5))})
		must(t, err)
		p, err := pb.GetProperties(ctx, nil)
		must(t, err)
		if *p.BlobSequenceNumber != 8 {
			t.Fatalf("seq %d", *p.BlobSequenceNumber)
		}
		// Resize truncates pages.
		_, err = pb.Resize(ctx, 1024, nil)
		must(t, err)
		if got := ranges(nil); got != "0-1023" {
			t.Fatalf("ranges after resize %s", got)
		}
		// Wrong type.
		_, err = e.cc.NewPageBlobClient("notpage").Create(ctx, 512, nil)
		must(t, err)
		_, err = e.cc.NewBlockBlobClient("bb").Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		_, err = e.cc.NewPageBlobClient("bb").UploadPages(ctx, body(page[:512]), blob.HTTPRange{Offset: 0, Count: 512}, nil)
		mustCode(t, err, 409, "InvalidBlobType")
	})
}

func TestAppendBlobs(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		ab := e.cc.NewAppendBlobClient("log")
		_, err := ab.AppendBlock(ctx, body([]byte("x")), nil)
		mustCode(t, err, 404, "BlobNotFound")
		_, err = ab.Create(ctx, nil)
		must(t, err)
		r, err := ab.AppendBlock(ctx, body([]byte("hello ")), nil)
		must(t, err)
		if *r.BlobAppendOffset != "0" || *r.BlobCommittedBlockCount != 1 {
			t.Fatalf("offset %s count %d", *r.BlobAppendOffset, *r.BlobCommittedBlockCount)
		}
		r, err = ab.AppendBlock(ctx, body([]byte("world")), &appendblob.AppendBlockOptions{
			AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: ptr(int64(6)), MaxSize: ptr(int64(11))}})
		must(t, err)
		if *r.BlobAppendOffset != "6" {
			t.Fatalf("offset %s", *r.BlobAppendOffset)
		}
		_, err = ab.AppendBlock(ctx, body([]byte("!")), &appendblob.AppendBlockOptions{
			AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: ptr(int64(3))}})
		mustCode(t, err, 412, "AppendPositionConditionNotMet")
		_, err = ab.AppendBlock(ctx, body([]byte("!")), &appendblob.AppendBlockOptions{
			AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{MaxSize: ptr(int64(11))}})
		mustCode(t, err, 412, "MaxBlobSizeConditionNotMet")
		got, err := ab.DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "hello world" || *got.BlobCommittedBlockCount != 2 {
			t.Fatalf("content %q", s)
		}
		_, err = e.cc.NewBlockBlobClient("log").GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
		mustCode(t, err, 409, "InvalidBlobType")
		_, err = e.cc.NewBlockBlobClient("blk").Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		_, err = e.cc.NewAppendBlobClient("blk").AppendBlock(ctx, body([]byte("x")), nil)
		mustCode(t, err, 409, "InvalidBlobType")
	})
}

func TestCopy(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		src := e.cc.NewBlockBlobClient("src dir/a+b.txt")
		up, err := src.Upload(ctx, body([]byte("copy me")), &blockblob.UploadOptions{
			Metadata: map[string]*string{"origin": ptr("src")}, HTTPHeaders: &blob.HTTPHeaders{BlobContentType: ptr("text/plain")}})
		must(t, err)
		dst := e.cc.NewBlockBlobClient("dst")
		cp, err := dst.StartCopyFromURL(ctx, src.URL(), nil)
		must(t, err)
		if *cp.CopyStatus != blob.CopyStatusTypeSuccess || *cp.CopyID == "" {
			t.Fatalf("copy %+v", cp)
		}
		p, err := dst.GetProperties(ctx, nil)
		must(t, err)
		if *p.CopyID != *cp.CopyID || *p.CopyStatus != blob.CopyStatusTypeSuccess || *p.CopyProgress != "7/7" ||
			lookup(p.Metadata, "origin") != "src" || *p.ContentType != "text/plain" {
			t.Fatalf("dest props %+v", p)
		}
		got, err := dst.DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "copy me" {
			t.Fatalf("copied %q", s)
		}
		// Metadata given replaces the source's.
		_, err = dst.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{Metadata: map[string]*string{"new": ptr("1")}})
		must(t, err)
		p, err = dst.GetProperties(ctx, nil)
		must(t, err)
		if lookup(p.Metadata, "new") != "1" || lookup(p.Metadata, "origin") != "" {
			t.Fatalf("metadata %v", p.Metadata)
		}
		// Source and destination conditions.
		_, err = dst.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: ptr(azcoreETag(`"0x1"`))}})
		mustCode(t, err, 412, "SourceConditionNotMet")
		_, err = dst.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{AccessConditions: ifMatch(`"0x1"`)})
		// Destination conditions answer ConditionNotMet (the SDK recordings).
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = dst.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: up.ETag}})
		must(t, err)
		// Missing source.
		_, err = dst.StartCopyFromURL(ctx, e.cc.NewBlobClient("missing").URL(), nil)
		mustStatus(t, err, 404)
		// Abort: nothing pending.
		_, err = dst.AbortCopyFromURL(ctx, *cp.CopyID, nil)
		mustCode(t, err, 409, "NoPendingCopyOperation")
		// Synchronous copy from URL and Put Blob From URL: their source
		// needs its own authorization, even inside the account.
		_, err = e.cc.NewBlobClient("dst2").CopyFromURL(ctx, src.URL(), nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		srcSAS := func(b *blob.Client) string {
			u, err := b.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
			must(t, err)
			return u
		}
		cf, err := e.cc.NewBlobClient("dst2").CopyFromURL(ctx, srcSAS(src.BlobClient()), nil)
		must(t, err)
		if *cf.CopyStatus != "success" {
			t.Fatalf("copy from url %v", *cf.CopyStatus)
		}
		_, err = e.cc.NewBlockBlobClient("dst3").UploadBlobFromURL(ctx, srcSAS(src.BlobClient()), nil)
		must(t, err)
		got, err = e.cc.NewBlobClient("dst3").DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "copy me" {
			t.Fatalf("from url %q", s)
		}
		// Snapshot as source, and Put Block From URL with a range.
		snap, err := src.CreateSnapshot(ctx, nil)
		must(t, err)
		_, err = src.Upload(ctx, body([]byte("changed")), nil)
		must(t, err)
		ss, _ := src.WithSnapshot(*snap.Snapshot)
		_, err = e.cc.NewBlobClient("fromsnap").StartCopyFromURL(ctx, ss.URL(), nil)
		must(t, err)
		got, err = e.cc.NewBlobClient("fromsnap").DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "copy me" {
			t.Fatalf("from snapshot %q", s)
		}
		sb := e.cc.NewBlockBlobClient("staged")
		_, err = sb.StageBlockFromURL(ctx, blockID(1), srcSAS(src.BlobClient()), &blockblob.StageBlockFromURLOptions{Range: blob.HTTPRange{Offset: 2, Count: 3}})
		must(t, err)
		_, err = sb.CommitBlockList(ctx, []string{blockID(1)}, nil)
		must(t, err)
		got, err = sb.DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "ang" {
			t.Fatalf("block from url %q", s)
		}
		// Append Block From URL and Put Page From URL.
		ab := e.cc.NewAppendBlobClient("appfrom")
		_, err = ab.Create(ctx, nil)
		must(t, err)
		_, err = ab.AppendBlockFromURL(ctx, srcSAS(src.BlobClient()), &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Offset: 0, Count: 3}})
		must(t, err)
		_, err = ab.AppendBlockFromURL(ctx, srcSAS(src.BlobClient()), nil)
		must(t, err)
		got, err = ab.DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "chachanged" {
			t.Fatalf("append from url %q", s)
		}
		pageSrc := e.cc.NewPageBlobClient("pagesrc")
		_, err = pageSrc.Create(ctx, 1024, nil)
		must(t, err)
		_, err = pageSrc.UploadPages(ctx, body(bytes.Repeat([]byte{'q'}, 512)), blob.HTTPRange{Offset: 512, Count: 512}, nil)
		must(t, err)
		pageDst := e.cc.NewPageBlobClient("pagedst")
		_, err = pageDst.Create(ctx, 2048, nil)
		must(t, err)
		_, err = pageDst.UploadPagesFromURL(ctx, srcSAS(pageSrc.BlobClient()), 512, 1536, 512, nil)
		must(t, err)
		got, err = pageDst.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 1536, Count: 512}})
		must(t, err)
		if !bytes.Equal(readAll(t, got.Body), bytes.Repeat([]byte{'q'}, 512)) {
			t.Fatal("page from url")
		}
		// Copy onto an existing blob of another type.
		_, err = e.cc.NewAppendBlobClient("app").Create(ctx, nil)
		must(t, err)
		_, err = e.cc.NewBlobClient("app").StartCopyFromURL(ctx, src.URL(), nil)
		mustCode(t, err, 409, "InvalidBlobType")
	})
}

func TestTags(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("tagged")
		up, err := bb.Upload(ctx, body([]byte("x")), &blockblob.UploadOptions{Tags: map[string]string{"project": "lazuli", "tier": "1"}})
		must(t, err)
		tags, err := bb.GetTags(ctx, nil)
		must(t, err)
		if len(tags.BlobTagSet) != 2 || *tags.BlobTagSet[0].Key != "project" || *tags.BlobTagSet[0].Value != "lazuli" {
			t.Fatalf("tags %+v", tags.BlobTagSet)
		}
		_, err = bb.SetTags(ctx, map[string]string{"project": "lazuli", "tier": "2"}, nil)
		must(t, err)
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if *p.ETag != *up.ETag || *p.TagCount != 2 {
			t.Fatalf("Set Blob Tags changed the ETag or count %v", *p.TagCount)
		}
		ifTags := func(expr string) *blob.AccessConditions {
			return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: &expr}}
		}
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: ifTags(`"tier" = '1'`)})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: ifTags(`tier = '2' AND (project = 'lazuli' OR project = 'x')`)})
		must(t, err)
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: ifTags(`tier =`)})
		mustStatus(t, err, 400)
		_, err = bb.SetTags(ctx, map[string]string{"bad!": "x"}, nil)
		mustStatus(t, err, 400)
		// Find Blobs by Tags.
		_, err = e.cc.NewBlockBlobClient("other").Upload(ctx, body([]byte("x")), &blockblob.UploadOptions{Tags: map[string]string{"project": "other"}})
		must(t, err)
		res, err := e.c.ServiceClient().FilterBlobs(ctx, `project = 'lazuli'`, nil)
		must(t, err)
		if len(res.Blobs) != 1 || *res.Blobs[0].Name != "tagged" || *res.Blobs[0].ContainerName != e.name {
			t.Fatalf("find %+v", res.Blobs)
		}
		res2, err := e.cc.FilterBlobs(ctx, `project >= 'a'`, nil)
		must(t, err)
		if len(res2.Blobs) != 2 {
			t.Fatalf("find in container: %d", len(res2.Blobs))
		}
	})
}

func azcoreETag(s string) azcoreETagT { return azcoreETagT(s) }

func TestListBlobs(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		names := []string{"a/1", "a/2", "a/b/3", "b", "c/4", "Z"}
		for _, n := range names {
			_, err := e.cc.NewBlockBlobClient(n).Upload(ctx, body([]byte(n)), &blockblob.UploadOptions{Metadata: map[string]*string{"name": ptr("v")}})
			must(t, err)
		}
		_, err := e.cc.NewBlockBlobClient("u/staged").StageBlock(ctx, blockID(1), body([]byte("x")), nil)
		must(t, err)
		flat := func(o *container.ListBlobsFlatOptions) []string {
			var out []string
			p := e.cc.NewListBlobsFlatPager(o)
			for p.More() {
				page, err := p.NextPage(ctx)
				must(t, err)
				for _, it := range page.Segment.BlobItems {
					out = append(out, *it.Name)
				}
			}
			return out
		}
		if got := strings.Join(flat(nil), ","); got != "Z,a/1,a/2,a/b/3,b,c/4" {
			t.Fatalf("flat %s", got)
		}
		if got := strings.Join(flat(&container.ListBlobsFlatOptions{MaxResults: ptr(int32(2))}), ","); got != "Z,a/1,a/2,a/b/3,b,c/4" {
			t.Fatalf("paged %s", got)
		}
		if got := strings.Join(flat(&container.ListBlobsFlatOptions{Prefix: ptr("a/")}), ","); got != "a/1,a/2,a/b/3" {
			t.Fatalf("prefix %s", got)
		}
		if got := strings.Join(flat(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{UncommittedBlobs: true}}), ","); got != "Z,a/1,a/2,a/b/3,b,c/4,u/staged" {
			t.Fatalf("uncommitted %s", got)
		}
		// Hierarchy, paged one entry at a time.
		var got []string
		p := e.cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{MaxResults: ptr(int32(1))})
		for p.More() {
			page, err := p.NextPage(ctx)
			must(t, err)
			for _, bp := range page.Segment.BlobPrefixes {
				got = append(got, "P:"+*bp.Name)
			}
			for _, it := range page.Segment.BlobItems {
				got = append(got, *it.Name)
			}
		}
		if s := strings.Join(got, ","); s != "Z,P:a/,b,P:c/" {
			t.Fatalf("hierarchy %s", s)
		}
		p = e.cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: ptr("a/"), Include: container.ListBlobsInclude{Metadata: true}})
		page, err := p.NextPage(ctx)
		must(t, err)
		if len(page.Segment.BlobItems) != 2 || len(page.Segment.BlobPrefixes) != 1 || *page.Segment.BlobPrefixes[0].Name != "a/b/" {
			t.Fatalf("hierarchy under a/: %d blobs %d prefixes", len(page.Segment.BlobItems), len(page.Segment.BlobPrefixes))
		}
		if lookup(page.Segment.BlobItems[0].Metadata, "name") != "v" {
			t.Fatalf("metadata in listing %v", page.Segment.BlobItems[0].Metadata)
		}
		it := page.Segment.BlobItems[0]
		if *it.Properties.ContentLength != 3 || *it.Properties.BlobType != blob.BlobTypeBlockBlob || *it.Properties.LeaseState != "available" || it.Properties.ETag == nil {
			t.Fatalf("properties %+v", it.Properties)
		}
		resp := raw(t, tg, http.MethodGet, e.name+"?restype=container&comp=list&maxresults=0", nil, nil)
		expectStatus(t, resp, 400, "OutOfRangeQueryParameterValue")
	})
}

func TestContainerACLAndServiceProperties(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		ids := []*container.SignedIdentifier{{ID: ptr("policy1"), AccessPolicy: &container.AccessPolicy{Start: &start, Expiry: ptr(start.Add(time.Hour)), Permission: ptr("rl")}}}
		_, err := e.cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{Access: ptr(container.PublicAccessTypeContainer), ContainerACL: ids})
		must(t, err)
		acl, err := e.cc.GetAccessPolicy(ctx, nil)
		must(t, err)
		if len(acl.SignedIdentifiers) != 1 || *acl.SignedIdentifiers[0].ID != "policy1" || *acl.SignedIdentifiers[0].AccessPolicy.Permission != "rl" ||
			!acl.SignedIdentifiers[0].AccessPolicy.Start.Equal(start) || *acl.BlobPublicAccess != container.PublicAccessTypeContainer {
			t.Fatalf("acl %+v", acl)
		}
		var six []*container.SignedIdentifier
		for i := 0; i < 6; i++ {
			six = append(six, &container.SignedIdentifier{ID: ptr(fmt.Sprint("p", i)), AccessPolicy: &container.AccessPolicy{Permission: ptr("r")}})
		}
		_, err = e.cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{ContainerACL: six})
		mustStatus(t, err, 400)
		resp := raw(t, tg, http.MethodPut, e.name+"?restype=container&comp=acl", nil, []byte("<SignedIdentifiers><Signed"))
		expectStatus(t, resp, 400, "InvalidXmlDocument")
		// Public container: anonymous reads and listing work.
		_, err = e.cc.NewBlockBlobClient("pub").Upload(ctx, body([]byte("public")), nil)
		must(t, err)
		anon, err := http.NewRequest(http.MethodGet, tg.BlobURL+"/"+e.name+"/pub", nil)
		must(t, err)
		ar, err := tg.HTTP.Do(anon)
		must(t, err)
		if ar.StatusCode != 200 || string(readAll(t, ar.Body)) != "public" {
			t.Fatalf("anonymous read %d", ar.StatusCode)
		}
		ar.Body.Close()
		// Service properties with CORS.
		svc := e.c.ServiceClient()
		_, err = svc.SetProperties(ctx, &service.SetPropertiesOptions{CORS: []*service.CORSRule{{
			AllowedOrigins: ptr("http://example.com,http://*.contoso.com"), AllowedMethods: ptr("GET,PUT"), AllowedHeaders: ptr("x-ms-meta-*,content-type"),
			ExposedHeaders: ptr("x-ms-request-id"), MaxAgeInSeconds: ptr(int32(60))}}})
		must(t, err)
		props, err := svc.GetProperties(ctx, nil)
		must(t, err)
		if len(props.CORS) != 1 || *props.CORS[0].AllowedOrigins != "http://example.com,http://*.contoso.com" || *props.CORS[0].MaxAgeInSeconds != 60 {
			t.Fatalf("cors %+v", props.CORS)
		}
		pre, err := http.NewRequest(http.MethodOptions, tg.BlobURL+"/"+e.name+"/pub", nil)
		must(t, err)
		pre.Header.Set("Origin", "http://example.com")
		pre.Header.Set("Access-Control-Request-Method", "PUT")
		pre.Header.Set("Access-Control-Request-Headers", "x-ms-meta-a, content-type")
		pr, err := tg.HTTP.Do(pre)
		must(t, err)
		pr.Body.Close()
		if pr.StatusCode != 200 || pr.Header.Get("Access-Control-Allow-Origin") != "http://example.com" || pr.Header.Get("Access-Control-Max-Age") != "60" {
			t.Fatalf("preflight %d %v", pr.StatusCode, pr.Header)
		}
		// A wildcard subdomain origin matches any depth, without case.
		for _, origin := range []string{"http://www.contoso.com", "http://A.b.Contoso.COM"} {
			pre.Header.Set("Origin", origin)
			pr, err = tg.HTTP.Do(pre)
			must(t, err)
			pr.Body.Close()
			if pr.StatusCode != 200 || pr.Header.Get("Access-Control-Allow-Origin") != origin {
				t.Fatalf("preflight from %s: %d %v", origin, pr.StatusCode, pr.Header)
			}
		}
		pre.Header.Set("Origin", "http://contoso.com.evil.com")
		pr, err = tg.HTTP.Do(pre)
		must(t, err)
		pr.Body.Close()
		if pr.StatusCode != 403 {
			t.Fatalf("preflight from a look-alike origin %d", pr.StatusCode)
		}
		pre.Header.Set("Origin", "http://evil.com")
		pr, err = tg.HTTP.Do(pre)
		must(t, err)
		pr.Body.Close()
		if pr.StatusCode != 403 || pr.Header.Get("x-ms-error-code") != "CorsPreflightFailure" {
			t.Fatalf("preflight from other origin %d", pr.StatusCode)
		}
		resp = raw(t, tg, http.MethodGet, e.name+"/pub", map[string]string{"Origin": "http://example.com"}, nil)
		if resp.Header.Get("Access-Control-Allow-Origin") != "http://example.com" || resp.Header.Get("Access-Control-Expose-Headers") != "x-ms-request-id" {
			t.Fatalf("cors on request %v", resp.Header)
		}
		// Account information.
		ai, err := svc.GetAccountInfo(ctx, nil)
		must(t, err)
		if ai.SKUName == nil || ai.AccountKind == nil {
			t.Fatalf("account info %+v", ai)
		}
	})
}
