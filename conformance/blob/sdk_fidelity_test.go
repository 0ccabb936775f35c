package blob_test

// Behaviours the Azure SDK for Go's own tests expect of the Blob service
// (they pass against Azure): each test here pins one of them.

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// Abort Copy with a copy id that is not a GUID is 400
// InvalidQueryParameterValue, checked before the blob is looked up (the
// blob here does not exist).
func TestAbortCopyWithoutCopy(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		_, err := e.cc.NewBlockBlobClient("never").AbortCopyFromURL(harness.Ctx(t), "copynotstarted", nil)
		mustCode(t, err, 400, "InvalidQueryParameterValue")
	})
}

// Put Block List over staged blocks only (no committed blob yet) with an
// If-Modified-Since later than the staging is 412 ConditionNotMet: the
// uncommitted blob has a last-modified time.
func TestPutBlockListIfModifiedSinceOverUncommitted(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("staged")
		_, err := bb.StageBlock(ctx, blockID(1), body([]byte("abc")), nil)
		must(t, err)
		later := time.Now().Add(10 * time.Second)
		_, err = bb.CommitBlockList(ctx, []string{blockID(1)}, &blockblob.CommitBlockListOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfModifiedSince: &later}}})
		mustCode(t, err, 412, "ConditionNotMet")
		earlier := time.Now().Add(-time.Hour)
		_, err = bb.CommitBlockList(ctx, []string{blockID(1)}, &blockblob.CommitBlockListOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfModifiedSince: &earlier}}})
		must(t, err)
	})
}

// x-ms-if-sequence-number-* of -1 is 400 InvalidInput; a value that is not
// a number stays InvalidHeaderValue.
func TestPutPageNegativeSequenceCondition(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		pb := e.cc.NewPageBlobClient("p")
		_, err := pb.Create(ctx, 1024, nil)
		must(t, err)
		for _, c := range []pageblob.SequenceNumberAccessConditions{
			{IfSequenceNumberLessThanOrEqualTo: ptr(int64(-1))},
			{IfSequenceNumberLessThan: ptr(int64(-1))},
			{IfSequenceNumberEqualTo: ptr(int64(-1))},
		} {
			_, err = pb.UploadPages(ctx, body(make([]byte, 512)), blob.HTTPRange{Count: 512}, &pageblob.UploadPagesOptions{SequenceNumberAccessConditions: &c})
			mustCode(t, err, 400, "InvalidInput")
		}
		resp := raw(t, tg, http.MethodPut, e.name+"/p?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-511",
			"x-ms-if-sequence-number-le": "x"}, make([]byte, 512))
		if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidHeaderValue" {
			t.Fatalf("non-numeric condition: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
	})
}

// A range with a negative start (the SDKs write "bytes=-2-497" for a
// negative offset) is ignored on Get Page Ranges, their diff and Get Blob,
// which then answer for the whole blob.
func TestNegativeRangeIgnoredOnReads(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		pb := e.cc.NewPageBlobClient("p")
		_, err := pb.Create(ctx, 2048, nil)
		must(t, err)
		_, err = pb.UploadPages(ctx, body(make([]byte, 512)), blob.HTTPRange{Count: 512}, nil)
		must(t, err)
		snap, err := pb.CreateSnapshot(ctx, nil)
		must(t, err)
		_, err = pb.UploadPages(ctx, body(make([]byte, 512)), blob.HTTPRange{Offset: 1024, Count: 512}, nil)
		must(t, err)
		r, err := pb.NewGetPageRangesPager(&pageblob.GetPageRangesOptions{Range: blob.HTTPRange{Offset: -2, Count: 500}}).NextPage(ctx)
		must(t, err)
		if len(r.PageRange) != 2 {
			t.Fatalf("page ranges: %d", len(r.PageRange))
		}
		d, err := pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{Range: blob.HTTPRange{Offset: -22, Count: 14},
			PrevSnapshot: snap.Snapshot}).NextPage(ctx)
		must(t, err)
		if len(d.PageRange) != 1 || *d.PageRange[0].Start != 1024 {
			t.Fatalf("diff: %+v", d.PageRange)
		}
		got, err := pb.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: -1}})
		must(t, err)
		if n := len(readAll(t, got.Body)); n != 2048 {
			t.Fatalf("download read %d bytes", n)
		}
		resp := raw(t, tg, http.MethodGet, e.name+"/p", map[string]string{"x-ms-range": "bytes=-1-5"}, nil)
		if n := len(readAll(t, resp.Body)); resp.StatusCode != 200 || n != 2048 {
			t.Fatalf("bytes=-1-5: %d, %d bytes", resp.StatusCode, n)
		}
	})
}

// Get Page Ranges with a range that cuts pages reports whole pages (Azure
// keeps pages, not bytes).
func TestPageRangesReportWholePages(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		pb := e.cc.NewPageBlobClient("p")
		_, err := pb.Create(ctx, 4096, nil)
		must(t, err)
		_, err = pb.UploadPages(ctx, body(make([]byte, 1024)), blob.HTTPRange{Count: 1024}, nil)
		must(t, err)
		for _, c := range []struct {
			rg         blob.HTTPRange
			start, end int64
		}{{blob.HTTPRange{Count: 2000}, 0, 1023}, {blob.HTTPRange{Count: 256}, 0, 511}, {blob.HTTPRange{Offset: 600, Count: 100}, 512, 1023}} {
			r, err := pb.NewGetPageRangesPager(&pageblob.GetPageRangesOptions{Range: c.rg}).NextPage(ctx)
			must(t, err)
			if len(r.PageRange) != 1 || *r.PageRange[0].Start != c.start || *r.PageRange[0].End != c.end {
				t.Fatalf("range %+v: got %d ranges, want %d-%d", c.rg, len(r.PageRange), c.start, c.end)
			}
		}
	})
}

// List Blobs honours startFrom (inclusive), flat and with a delimiter.
func TestListBlobsStartFrom(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		for _, n := range []string{"a.txt", "b.txt", "c/x", "c/y", "d"} {
			_, err := e.cc.NewBlockBlobClient(n).UploadBuffer(ctx, []byte("x"), nil)
			must(t, err)
		}
		r, err := e.cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{StartFrom: ptr("b.txt")}).NextPage(ctx)
		must(t, err)
		var got []string
		for _, it := range r.Segment.BlobItems {
			got = append(got, *it.Name)
		}
		if strings.Join(got, ",") != "b.txt,c/x,c/y,d" {
			t.Fatalf("flat from b.txt: %v", got)
		}
		h, err := e.cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{StartFrom: ptr("c/y")}).NextPage(ctx)
		must(t, err)
		if len(h.Segment.BlobPrefixes) != 1 || *h.Segment.BlobPrefixes[0].Name != "c/" || len(h.Segment.BlobItems) != 1 || *h.Segment.BlobItems[0].Name != "d" {
			t.Fatalf("hierarchy from c/y: %d prefixes, %d blobs", len(h.Segment.BlobPrefixes), len(h.Segment.BlobItems))
		}
	})
}

// A blob name holding U+FFFF is accepted, and List Blobs returns it (and a
// prefix holding it) as <Name Encoded="true">, which the SDK decodes.
func TestBlobNameWithNoncharacterListedEncoded(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		name := "dir1/dir2/file\uFFFF.blob"
		_, err := e.cc.NewBlockBlobClient(name).UploadBuffer(ctx, []byte("x+y z"), nil)
		must(t, err)
		r, err := e.cc.NewListBlobsFlatPager(nil).NextPage(ctx)
		must(t, err)
		if len(r.Segment.BlobItems) != 1 || *r.Segment.BlobItems[0].Name != name {
			t.Fatalf("flat listing: %d items", len(r.Segment.BlobItems))
		}
		h, err := e.cc.NewListBlobsHierarchyPager(".b", nil).NextPage(ctx)
		must(t, err)
		if len(h.Segment.BlobPrefixes) != 1 || *h.Segment.BlobPrefixes[0].Name != "dir1/dir2/file\uFFFF.b" {
			t.Fatalf("hierarchy: %d prefixes", len(h.Segment.BlobPrefixes))
		}
		resp := raw(t, tg, http.MethodGet, e.name+"?restype=container&comp=list", nil, nil)
		if b := string(readAll(t, resp.Body)); !strings.Contains(b, `<Name Encoded="true">dir1%2Fdir2%2Ffile%EF%BF%BF.blob</Name>`) {
			t.Fatalf("listing body: %s", b)
		}
		got, err := e.cc.NewBlobClient(name).DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, got.Body)); s != "x+y z" {
			t.Fatalf("content %q", s)
		}
	})
}

// Downloads framed as structured messages with CRC-64 (what the SDK asks
// for with TransferValidationTypeComputeStructuredMessageCRC64) round-trip
// every size, the empty blob included: its content travels in one empty
// segment, as the SDK's own encoder frames it.
func TestStructuredDownloadRoundTrip(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("b")
		for _, n := range []int{0, 1, 100, 4096, 8*1024 + 37} {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(i*31 + n)
			}
			_, err := bb.Upload(ctx, body(data), nil)
			must(t, err)
			d, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{TransactionalValidation: blob.TransferValidationTypeComputeStructuredMessageCRC64(0)})
			must(t, err)
			if got := readAll(t, d.Body); string(got) != string(data) {
				t.Fatalf("size %d: read %d bytes", n, len(got))
			}
		}
	})
}

// A container service SAS runs a Blob Batch addressed to its container,
// and one sent to the account (POST /?comp=batch) fails as Azure fails it:
// 403 AuthenticationFailed, the signature covering a container the URL
// does not name.
func TestBatchDeleteUnderServiceSAS(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		q, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, StartTime: time.Now().UTC().Add(-time.Minute),
			ExpiryTime: time.Now().UTC().Add(time.Hour), ContainerName: e.name,
			Permissions: (&sas.BlobPermissions{Read: true, Create: true, Write: true, List: true, Add: true, Delete: true}).String()}.SignWithSharedKey(cred)
		must(t, err)
		for _, n := range []string{"a", "b"} {
			_, err = e.cc.NewBlockBlobClient(n).UploadBuffer(ctx, []byte("x"), nil)
			must(t, err)
		}
		sc, err := service.NewClientWithNoCredential(tg.BlobURL+"/?"+q.Encode(), &service.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		sb, err := sc.NewBatchBuilder()
		must(t, err)
		must(t, sb.Delete(e.name, "a", nil))
		_, err = sc.SubmitBatch(ctx, sb, nil)
		mustCode(t, err, 403, "AuthenticationFailed")
		cc, err := container.NewClientWithNoCredential(tg.BlobURL+"/"+e.name+"?"+q.Encode(), &container.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		cb, err := cc.NewBatchBuilder()
		must(t, err)
		must(t, cb.Delete("a", nil))
		must(t, cb.Delete("b", nil))
		resp, err := cc.SubmitBatch(ctx, cb, nil)
		must(t, err)
		for _, r := range resp.Responses {
			if r.Error != nil {
				t.Fatalf("container batch: %v", r.Error)
			}
		}
	})
}

// A tier given on upload is a tier set then: x-ms-access-tier-change-time
// is reported, and Delete Blob's x-ms-access-tier-if-modified-since /
// -unmodified-since are checked against it (412
// AccessTierChangeTimeConditionNotMet).
func TestAccessTierChangeTime(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("b")
		_, err := bb.Upload(ctx, body([]byte("x")), &blockblob.UploadOptions{Tier: ptr(blob.AccessTierHot)})
		must(t, err)
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if p.AccessTierChangeTime == nil {
			t.Fatal("no access tier change time after an upload with a tier")
		}
		changed := *p.AccessTierChangeTime
		later, earlier := changed.Add(10*time.Second), changed.Add(-10*time.Second)
		_, err = bb.Delete(ctx, &blob.DeleteOptions{AccessTierConditions: &blob.AccessTierConditions{IfModifiedSince: &later}})
		mustCode(t, err, 412, "AccessTierChangeTimeConditionNotMet")
		_, err = bb.Delete(ctx, &blob.DeleteOptions{AccessTierConditions: &blob.AccessTierConditions{IfUnmodifiedSince: &earlier}})
		mustCode(t, err, 412, "AccessTierChangeTimeConditionNotMet")
		_, err = bb.Delete(ctx, &blob.DeleteOptions{AccessTierConditions: &blob.AccessTierConditions{IfModifiedSince: &earlier, IfUnmodifiedSince: &later}})
		must(t, err)
		// An upload without a tier has an inferred tier and no change time.
		_, err = bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		if p, err = bb.GetProperties(ctx, nil); err != nil || p.AccessTierChangeTime != nil {
			t.Fatalf("inferred tier: %v %v", err, p.AccessTierChangeTime)
		}
	})
}

// Set Blob Tier works on snapshots, each keeping its own tier; an archived
// snapshot cannot be rehydrated (409 BlobArchived).
func TestSetTierOnSnapshot(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("b")
		_, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		var snaps []*blob.Client
		for i := 0; i < 2; i++ {
			s, err := bb.CreateSnapshot(ctx, nil)
			must(t, err)
			c, err := bb.WithSnapshot(*s.Snapshot)
			must(t, err)
			snaps = append(snaps, c.BlobClient())
		}
		_, err = snaps[0].SetTier(ctx, blob.AccessTierArchive, nil)
		must(t, err)
		for i, want := range []string{"Archive", "Hot"} {
			p, err := snaps[i].GetProperties(ctx, nil)
			must(t, err)
			if *p.AccessTier != want {
				t.Fatalf("snapshot %d tier %s, want %s", i, *p.AccessTier, want)
			}
		}
		if p, err := bb.GetProperties(ctx, nil); err != nil || *p.AccessTier != "Hot" {
			t.Fatalf("base blob: %v", err)
		}
		_, err = snaps[0].SetTier(ctx, blob.AccessTierCool, nil)
		mustCode(t, err, 409, "BlobArchived")
		_, err = snaps[1].SetTier(ctx, blob.AccessTierCool, nil)
		must(t, err)
	})
}

// Leaving the archive tier is a pending rehydration, as the SDK's recorded
// tests see on Azure: the blob stays Archive with x-ms-archive-status
// rehydrate-pending-to-<tier> and the priority asked for (Standard by
// default), in properties and listings.
func TestRehydrateStatus(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		for _, c := range []struct {
			to       blob.AccessTier
			priority *blob.RehydratePriority
			status   blob.ArchiveStatus
		}{{blob.AccessTierCool, nil, blob.ArchiveStatusRehydratePendingToCool},
			{blob.AccessTierHot, ptr(blob.RehydratePriorityHigh), blob.ArchiveStatusRehydratePendingToHot},
			{blob.AccessTierCold, nil, blob.ArchiveStatusRehydratePendingToCold}} {
			bb := e.cc.NewBlockBlobClient("r-" + string(c.to))
			_, err := bb.Upload(ctx, body([]byte("x")), &blockblob.UploadOptions{Tier: ptr(blob.AccessTierArchive)})
			must(t, err)
			_, err = bb.SetTier(ctx, c.to, &blob.SetTierOptions{RehydratePriority: c.priority})
			must(t, err)
			p, err := bb.GetProperties(ctx, nil)
			must(t, err)
			want := "Standard"
			if c.priority != nil {
				want = string(*c.priority)
			}
			if *p.AccessTier != "Archive" || p.ArchiveStatus == nil || *p.ArchiveStatus != string(c.status) || p.RehydratePriority == nil || *p.RehydratePriority != want {
				t.Fatalf("to %s: tier %s status %v priority %v", c.to, *p.AccessTier, p.ArchiveStatus, p.RehydratePriority)
			}
		}
		r, err := e.cc.NewListBlobsFlatPager(nil).NextPage(ctx)
		must(t, err)
		for _, it := range r.Segment.BlobItems {
			if *it.Properties.AccessTier != blob.AccessTierArchive || it.Properties.ArchiveStatus == nil {
				t.Fatalf("listing %s: %v %v", *it.Name, *it.Properties.AccessTier, it.Properties.ArchiveStatus)
			}
		}
	})
}

// Incremental Copy Blob copies a page blob snapshot (its URL with a SAS,
// as the SDK's own test sends it): the answer says pending, as Azure's
// does; the destination then reports success, x-ms-incremental-copy and
// the destination snapshot the copy made, which holds the content. A later
// copy of an earlier snapshot is 409
// IncrementalCopyOfEarlierSnapshotNotAllowed.
func TestIncrementalCopy(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		src := e.cc.NewPageBlobClient("src")
		_, err := src.Create(ctx, 1024, nil)
		must(t, err)
		_, err = src.UploadPages(ctx, body(bytes.Repeat([]byte{'a'}, 1024)), blob.HTTPRange{Count: 1024}, nil)
		must(t, err)
		s1, err := src.CreateSnapshot(ctx, nil)
		must(t, err)
		_, err = src.UploadPages(ctx, body(bytes.Repeat([]byte{'b'}, 512)), blob.HTTPRange{Count: 512}, nil)
		must(t, err)
		s2, err := src.CreateSnapshot(ctx, nil)
		must(t, err)
		srcURL := readSAS(t, src.BlobClient())
		dst := e.cc.NewPageBlobClient("dst")
		resp, err := dst.StartCopyIncremental(ctx, srcURL, *s2.Snapshot, nil)
		must(t, err)
		if resp.CopyID == nil || *resp.CopyStatus != blob.CopyStatusTypePending {
			t.Fatalf("incremental copy answer %v", resp.CopyStatus)
		}
		p, err := dst.GetProperties(ctx, nil)
		must(t, err)
		if *p.CopyStatus != blob.CopyStatusTypeSuccess || p.IsIncrementalCopy == nil || !*p.IsIncrementalCopy || p.DestinationSnapshot == nil {
			t.Fatalf("destination %v %v %v", *p.CopyStatus, p.IsIncrementalCopy, p.DestinationSnapshot)
		}
		snap, err := dst.WithSnapshot(*p.DestinationSnapshot)
		must(t, err)
		d, err := snap.DownloadStream(ctx, nil)
		must(t, err)
		if got := readAll(t, d.Body); !bytes.Equal(got, append(bytes.Repeat([]byte{'b'}, 512), bytes.Repeat([]byte{'a'}, 512)...)) {
			t.Fatalf("destination snapshot content %q", got[:8])
		}
		_, err = dst.StartCopyIncremental(ctx, srcURL, *s1.Snapshot, nil)
		mustCode(t, err, 409, "IncrementalCopyOfEarlierSnapshotNotAllowed")
		_, err = e.cc.NewPageBlobClient("nosnap").StartCopyIncremental(ctx, srcURL, "", nil)
		mustCode(t, err, 400, "InvalidHeaderValue")
	})
}
