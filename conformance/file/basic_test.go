package file_test

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func TestShareLifecycle(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := client(t, tg)
		name := harness.UniqueName("life")
		sc := svc.NewShareClient(name)
		_, err := sc.Create(ctx, &share.CreateOptions{Quota: ptr(int32(10)), Metadata: map[string]*string{"Owner": ptr("me")}})
		must(t, err)
		_, err = sc.Create(ctx, nil)
		mustCode(t, err, 409, "ShareAlreadyExists")
		p, err := sc.GetProperties(ctx, nil)
		must(t, err)
		if *p.Quota != 10 || meta(p.Metadata, "Owner") != "me" || p.ETag == nil || p.LastModified == nil {
			t.Fatalf("properties: quota %v meta %v", *p.Quota, p.Metadata)
		}
		if *p.LeaseState != "available" || *p.LeaseStatus != "unlocked" {
			t.Fatalf("lease %v %v", *p.LeaseState, *p.LeaseStatus)
		}
		_, err = sc.SetProperties(ctx, &share.SetPropertiesOptions{Quota: ptr(int32(20)), AccessTier: ptr(share.AccessTierCool)})
		must(t, err)
		_, err = sc.SetMetadata(ctx, &share.SetMetadataOptions{Metadata: map[string]*string{"a": ptr("1")}})
		must(t, err)
		p, err = sc.GetProperties(ctx, nil)
		must(t, err)
		if *p.Quota != 20 || *p.AccessTier != "Cool" || len(p.Metadata) != 1 || meta(p.Metadata, "a") != "1" {
			t.Fatalf("after set: %v %v %v", *p.Quota, *p.AccessTier, p.Metadata)
		}
		// List Shares with prefix, metadata and paging.
		for i := 0; i < 3; i++ {
			_, err := svc.CreateShare(ctx, name+"x"+string(rune('a'+i)), nil)
			must(t, err)
		}
		var names []string
		pager := svc.NewListSharesPager(&service.ListSharesOptions{Prefix: ptr(name), MaxResults: ptr(int32(2)), Include: service.ListSharesInclude{Metadata: true}})
		pages := 0
		for pager.More() {
			pg, err := pager.NextPage(ctx)
			must(t, err)
			pages++
			for _, s := range pg.Shares {
				names = append(names, *s.Name)
				if *s.Name == name && (*s.Properties.Quota != 20 || meta(s.Metadata, "a") != "1") {
					t.Fatalf("listed share: %+v", s.Properties)
				}
			}
		}
		if len(names) != 4 || pages != 2 || names[0] != name {
			t.Fatalf("listed %v in %d pages", names, pages)
		}
		st, err := sc.GetStatistics(ctx, nil)
		must(t, err)
		if *st.ShareUsageBytes != 0 {
			t.Fatalf("usage %d", *st.ShareUsageBytes)
		}
		_, err = sc.Delete(ctx, nil)
		must(t, err)
		_, err = sc.GetProperties(ctx, nil)
		mustCode(t, err, 404, "ShareNotFound")
		_, err = sc.NewRootDirectoryClient().NewFileClient("f").Create(ctx, 1, nil)
		mustCode(t, err, 404, "ShareNotFound")
		// The name is free again at once.
		_, err = sc.Create(ctx, nil)
		must(t, err)
	})
}

func TestDirectoriesAndFiles(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		dir := e.sc.NewDirectoryClient("Docs")
		dr, err := dir.Create(ctx, &directory.CreateOptions{Metadata: map[string]*string{"k": ptr("v")}})
		must(t, err)
		if dr.ID == nil || dr.FileAttributes == nil || *dr.FileAttributes != "Directory" {
			t.Fatalf("create dir: %+v", dr)
		}
		_, err = dir.Create(ctx, nil)
		mustCode(t, err, 409, "ResourceAlreadyExists")
		_, err = e.sc.NewDirectoryClient("missing/sub").Create(ctx, nil)
		mustCode(t, err, 404, "ParentNotFound")

		// Case-insensitive, case-preserving.
		f := dir.NewFileClient("Report.TXT")
		cr, err := f.Create(ctx, 1024, &file.CreateOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: ptr("text/plain")}})
		must(t, err)
		if cr.ID == nil || *cr.FileAttributes != "Archive" || cr.FilePermissionKey == nil {
			t.Fatalf("create file: attrs %v", *cr.FileAttributes)
		}
		other := e.sc.NewDirectoryClient("docs").NewFileClient("report.txt")
		p, err := other.GetProperties(ctx, nil)
		must(t, err)
		if *p.ContentLength != 1024 || *p.ContentType != "text/plain" || *p.ID != *cr.ID {
			t.Fatalf("props via other case: %d %s", *p.ContentLength, *p.ContentType)
		}
		// A directory and a file cannot share a name.
		_, err = dir.NewSubdirectoryClient("REPORT.txt").Create(ctx, nil)
		mustCode(t, err, 409, "ResourceAlreadyExists")
		_, err = root.NewFileClient("DOCS").Create(ctx, 1, nil)
		mustCode(t, err, 409, "ResourceAlreadyExists")

		// Directory properties and metadata.
		gp, err := dir.GetProperties(ctx, nil)
		must(t, err)
		if meta(gp.Metadata, "k") != "v" || *gp.FileAttributes != "Directory" {
			t.Fatalf("dir props %v %v", gp.Metadata, *gp.FileAttributes)
		}
		_, err = dir.SetMetadata(ctx, &directory.SetMetadataOptions{Metadata: map[string]*string{"x": ptr("y")}})
		must(t, err)
		created := time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC)
		_, err = dir.SetProperties(ctx, &directory.SetPropertiesOptions{FileSMBProperties: &file.SMBProperties{
			Attributes: &file.NTFSFileAttributes{Hidden: true}, CreationTime: &created}})
		must(t, err)
		gp, err = dir.GetProperties(ctx, nil)
		must(t, err)
		if !gp.FileCreationTime.Equal(created) || *gp.FileAttributes != "Hidden | Directory" || meta(gp.Metadata, "x") != "y" {
			t.Fatalf("after set: %v %q %v", gp.FileCreationTime, *gp.FileAttributes, gp.Metadata)
		}

		// Listing: one level, files and directories, stored case, paging.
		_, err = dir.NewSubdirectoryClient("sub").Create(ctx, nil)
		must(t, err)
		for _, n := range []string{"a.bin", "B.bin", "c.bin"} {
			_, err := dir.NewFileClient(n).Create(ctx, 10, nil)
			must(t, err)
		}
		_, err = dir.NewSubdirectoryClient("sub").NewFileClient("deep").Create(ctx, 1, nil)
		must(t, err)
		var got []string
		pager := dir.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{MaxResults: ptr(int32(2)),
			Include: directory.ListFilesInclude{Timestamps: true, ETag: true, Attributes: true, PermissionKey: true}})
		for pager.More() {
			pg, err := pager.NextPage(ctx)
			must(t, err)
			for _, d := range pg.Segment.Directories {
				got = append(got, "d:"+*d.Name)
			}
			for _, fl := range pg.Segment.Files {
				got = append(got, "f:"+*fl.Name)
				if *fl.Properties.ContentLength != 10 && *fl.Name != "Report.TXT" || fl.Properties.ETag == nil || fl.Attributes == nil {
					t.Fatalf("listed file %s: %+v", *fl.Name, fl.Properties)
				}
			}
		}
		sort.Strings(got)
		want := []string{"d:sub", "f:B.bin", "f:Report.TXT", "f:a.bin", "f:c.bin"}
		if len(got) != len(want) {
			t.Fatalf("listed %v", got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("listed %v", got)
			}
		}
		pg, err := dir.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{Prefix: ptr("b")}).NextPage(ctx)
		must(t, err)
		if len(pg.Segment.Files) != 1 || *pg.Segment.Files[0].Name != "B.bin" {
			t.Fatalf("prefix listing %v", pg.Segment.Files)
		}

		// Delete: non-empty directory refused, then files and dirs.
		_, err = dir.Delete(ctx, nil)
		mustCode(t, err, 409, "DirectoryNotEmpty")
		_, err = dir.NewSubdirectoryClient("sub").NewFileClient("DEEP").Delete(ctx, nil)
		must(t, err)
		_, err = dir.NewSubdirectoryClient("sub").Delete(ctx, nil)
		must(t, err)
		_, err = dir.NewFileClient("a.bin").Delete(ctx, nil)
		must(t, err)
		_, err = dir.NewFileClient("a.bin").GetProperties(ctx, nil)
		mustCode(t, err, 404, "ResourceNotFound")
		_, err = dir.NewFileClient("a.bin").Delete(ctx, nil)
		mustCode(t, err, 404, "ResourceNotFound")
	})
}

func TestRangesSparseAndResize(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		f := e.sc.NewRootDirectoryClient().NewFileClient("data.bin")
		// A 1 TiB file stores nothing.
		_, err := f.Create(ctx, 1<<40, nil)
		must(t, err)
		rl, err := f.GetRangeList(ctx, nil)
		must(t, err)
		if len(rl.Ranges) != 0 || *rl.FileContentLength != 1<<40 {
			t.Fatalf("fresh ranges %v", rl.Ranges)
		}
		st, err := e.sc.GetStatistics(ctx, nil)
		must(t, err)
		if *st.ShareUsageBytes != 1<<40 {
			t.Logf("usage %d", *st.ShareUsageBytes)
		}
		_, err = f.Create(ctx, 65536, nil)
		must(t, err)
		data := make([]byte, 65536)
		rand.Read(data)
		// Any alignment.
		_, err = f.UploadRange(ctx, 0, body(data[:1000]), nil)
		must(t, err)
		_, err = f.UploadRange(ctx, 1000, body(data[1000:]), nil)
		must(t, err)
		dl, err := f.DownloadStream(ctx, nil)
		must(t, err)
		if got := readAll(t, dl.Body); !bytes.Equal(got, data) {
			t.Fatal("content differs")
		}
		dl, err = f.DownloadStream(ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 100, Count: 50}, RangeGetContentMD5: ptr(true)})
		must(t, err)
		if got := readAll(t, dl.Body); !bytes.Equal(got, data[100:150]) || dl.ContentMD5 == nil || *dl.ContentRange != "bytes 100-149/65536" {
			t.Fatalf("range read: %v", dl.ContentRange)
		}
		// Clear 768..2303: whole pages freed, unaligned edges zeroed.
		_, err = f.ClearRange(ctx, file.HTTPRange{Offset: 768, Count: 1536}, nil)
		must(t, err)
		rl, err = f.GetRangeList(ctx, nil)
		must(t, err)
		if len(rl.Ranges) != 2 || *rl.Ranges[0].Start != 0 || *rl.Ranges[0].End != 1023 || *rl.Ranges[1].Start != 2048 || *rl.Ranges[1].End != 65535 {
			for _, r := range rl.Ranges {
				t.Logf("range %d-%d", *r.Start, *r.End)
			}
			t.Fatal("ranges after clear")
		}
		dl, err = f.DownloadStream(ctx, nil)
		must(t, err)
		got := readAll(t, dl.Body)
		want := append([]byte(nil), data...)
		clear(want[768:2304])
		if !bytes.Equal(got, want) {
			t.Fatal("content after clear")
		}
		// Past the end: 416.
		_, err = f.UploadRange(ctx, 65530, body(make([]byte, 10)), nil)
		mustCode(t, err, 416, "InvalidRange")
		// Resize: truncate then extend with zeros.
		_, err = f.Resize(ctx, 100, nil)
		must(t, err)
		_, err = f.Resize(ctx, 200, nil)
		must(t, err)
		dl, err = f.DownloadStream(ctx, nil)
		must(t, err)
		got = readAll(t, dl.Body)
		if len(got) != 200 || !bytes.Equal(got[:100], data[:100]) || !bytes.Equal(got[100:], make([]byte, 100)) {
			t.Fatal("content after resize")
		}
		rl, err = f.GetRangeList(ctx, nil)
		must(t, err)
		if len(rl.Ranges) != 1 || *rl.Ranges[0].End != 99 {
			t.Fatalf("ranges after resize: %d", len(rl.Ranges))
		}
		// UploadBuffer / DownloadBuffer (the SDK's chunked helpers).
		big := make([]byte, 9<<20+123)
		rand.Read(big)
		g := e.sc.NewRootDirectoryClient().NewFileClient("big.bin")
		_, err = g.Create(ctx, int64(len(big)), nil)
		must(t, err)
		must(t, g.UploadBuffer(ctx, big, &file.UploadBufferOptions{ChunkSize: 4 << 20, Concurrency: 3}))
		back := make([]byte, len(big))
		n, err := g.DownloadBuffer(ctx, back, &file.DownloadBufferOptions{ChunkSize: 2 << 20, Concurrency: 3})
		must(t, err)
		if n != int64(len(big)) || !bytes.Equal(back, big) {
			t.Fatal("buffer round trip")
		}
		// A Put Range body larger than 4 MiB is refused.
		resp := raw(t, tg, http.MethodPut, e.name+"/big.bin?comp=range", map[string]string{"x-ms-range": "bytes=0-4194304", "x-ms-write": "update"}, make([]byte, 4<<20+1))
		wantRaw(t, resp, 413, "RequestBodyTooLarge")
	})
}
