package file_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	blobsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func TestFileLease(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		f := e.sc.NewRootDirectoryClient().NewFileClient("leased")
		_, err := f.Create(ctx, 512, nil)
		must(t, err)
		lc, err := lease.NewFileClient(f, &lease.FileClientOptions{LeaseID: ptr("11111111-1111-1111-1111-111111111111")})
		must(t, err)
		before, err := f.GetProperties(ctx, nil)
		must(t, err)
		_, err = lc.Acquire(ctx, nil)
		must(t, err)
		after, err := f.GetProperties(ctx, nil)
		must(t, err)
		if *after.LeaseState != "leased" || *after.LeaseDuration != "infinite" || *after.ETag != *before.ETag {
			t.Fatalf("leased: %v %v etag changed %v", *after.LeaseState, *after.LeaseDuration, *after.ETag != *before.ETag)
		}
		// Writes without the id: 412 LeaseIdMissing; wrong id: mismatch.
		_, err = f.UploadRange(ctx, 0, body([]byte("x")), nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = f.SetMetadata(ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"a": ptr("b")}})
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = f.Delete(ctx, nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		wrong := &file.LeaseAccessConditions{LeaseID: ptr("22222222-2222-2222-2222-222222222222")}
		_, err = f.UploadRange(ctx, 0, body([]byte("x")), &file.UploadRangeOptions{LeaseAccessConditions: wrong})
		mustCode(t, err, 412, "LeaseIdMismatchWithFileOperation")
		right := &file.LeaseAccessConditions{LeaseID: lc.LeaseID()}
		_, err = f.UploadRange(ctx, 0, body([]byte("x")), &file.UploadRangeOptions{LeaseAccessConditions: right})
		must(t, err)
		// Reads need no id.
		_, err = f.DownloadStream(ctx, nil)
		must(t, err)
		// Another acquirer gets 409.
		other, err := lease.NewFileClient(f, &lease.FileClientOptions{LeaseID: ptr("33333333-3333-3333-3333-333333333333")})
		must(t, err)
		_, err = other.Acquire(ctx, nil)
		mustCode(t, err, 409, "LeaseAlreadyPresent")
		// Change, release, break.
		_, err = lc.Change(ctx, "44444444-4444-4444-4444-444444444444", nil)
		must(t, err)
		_, err = lc.Release(ctx, nil)
		must(t, err)
		_, err = lc.Release(ctx, nil)
		mustCode(t, err, 409, "LeaseIdMismatchWithLeaseOperation")
		_, err = lc.Break(ctx, nil)
		mustCode(t, err, 409, "LeaseNotPresentWithLeaseOperation")
		_, err = lc.Acquire(ctx, nil)
		must(t, err)
		br, err := lc.Break(ctx, nil)
		must(t, err)
		_ = br
		p, err := f.GetProperties(ctx, nil)
		must(t, err)
		if *p.LeaseState != "broken" {
			t.Fatalf("after break: %v", *p.LeaseState)
		}
		// A write without an id through a broken lease succeeds.
		_, err = f.UploadRange(ctx, 0, body([]byte("y")), nil)
		must(t, err)
		_, err = f.UploadRange(ctx, 0, body([]byte("y")), &file.UploadRangeOptions{LeaseAccessConditions: right})
		mustCode(t, err, 412, "LeaseNotPresentWithFileOperation")
	})
}

func TestShareLease(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		lc, err := lease.NewShareClient(e.sc, &lease.ShareClientOptions{LeaseID: ptr("11111111-1111-1111-1111-111111111111")})
		must(t, err)
		_, err = lc.Acquire(ctx, 15, nil)
		must(t, err)
		_, err = lc.Renew(ctx, nil)
		must(t, err)
		_, err = e.sc.SetMetadata(ctx, &share.SetMetadataOptions{Metadata: map[string]*string{"a": ptr("1")}})
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = e.sc.Delete(ctx, nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = e.sc.SetProperties(ctx, &share.SetPropertiesOptions{Quota: ptr(int32(5)), LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: ptr("22222222-2222-2222-2222-222222222222")}})
		mustCode(t, err, 412, "LeaseIdMismatchWithShareOperation")
		_, err = e.sc.SetProperties(ctx, &share.SetPropertiesOptions{Quota: ptr(int32(5)), LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: lc.LeaseID()}})
		must(t, err)
		// Reads never need it.
		p, err := e.sc.GetProperties(ctx, nil)
		must(t, err)
		if *p.LeaseState != "leased" || *p.LeaseDuration != "fixed" {
			t.Fatalf("share lease %v %v", *p.LeaseState, *p.LeaseDuration)
		}
		br, err := lc.Break(ctx, &lease.ShareBreakOptions{BreakPeriod: ptr(int32(0))})
		must(t, err)
		if *br.LeaseTime != 0 {
			t.Fatalf("lease time %d", *br.LeaseTime)
		}
		_, err = e.sc.Delete(ctx, nil)
		must(t, err)
	})
}

func TestShareSnapshots(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		f := e.sc.NewRootDirectoryClient().NewFileClient("f")
		_, err := f.Create(ctx, 1024, nil)
		must(t, err)
		_, err = f.UploadRange(ctx, 0, body(bytes.Repeat([]byte("a"), 1024)), nil)
		must(t, err)
		snap, err := e.sc.CreateSnapshot(ctx, &share.CreateSnapshotOptions{Metadata: map[string]*string{"when": ptr("first")}})
		must(t, err)
		// Writes after the snapshot do not show in it.
		_, err = f.UploadRange(ctx, 512, body(bytes.Repeat([]byte("b"), 512)), nil)
		must(t, err)
		_, err = e.sc.NewRootDirectoryClient().NewFileClient("later").Create(ctx, 1, nil)
		must(t, err)
		ss, err := e.sc.WithSnapshot(*snap.Snapshot)
		must(t, err)
		sf := ss.NewRootDirectoryClient().NewFileClient("f")
		dl, err := sf.DownloadStream(ctx, nil)
		must(t, err)
		if got := readAll(t, dl.Body); !bytes.Equal(got, bytes.Repeat([]byte("a"), 1024)) {
			t.Fatal("snapshot content changed")
		}
		_, err = ss.NewRootDirectoryClient().NewFileClient("later").GetProperties(ctx, nil)
		mustCode(t, err, 404, "ResourceNotFound")
		sp, err := ss.GetProperties(ctx, nil)
		must(t, err)
		if meta(sp.Metadata, "when") != "first" {
			t.Fatalf("snapshot metadata %v", sp.Metadata)
		}
		// Snapshots are read-only.
		_, err = sf.UploadRange(ctx, 0, body([]byte("x")), nil)
		mustCode(t, err, 400, "ShareSnapshotOperationNotSupported")
		// List Ranges diff against the snapshot.
		rl, err := f.GetRangeList(ctx, &file.GetRangeListOptions{PrevShareSnapshot: snap.Snapshot})
		must(t, err)
		if len(rl.Ranges) != 1 || *rl.Ranges[0].Start != 512 || *rl.Ranges[0].End != 1023 {
			t.Fatalf("diff %d ranges", len(rl.Ranges))
		}
		_, err = f.ClearRange(ctx, file.HTTPRange{Offset: 0, Count: 512}, nil)
		must(t, err)
		rl, err = f.GetRangeList(ctx, &file.GetRangeListOptions{PrevShareSnapshot: snap.Snapshot})
		must(t, err)
		if len(rl.ClearRanges) != 1 || *rl.ClearRanges[0].End != 511 {
			t.Fatalf("diff clear ranges %d", len(rl.ClearRanges))
		}
		// Listed with include=snapshots; delete needs x-ms-delete-snapshots.
		pg, err := e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: ptr(e.name), Include: service.ListSharesInclude{Snapshots: true}}).NextPage(ctx)
		must(t, err)
		if len(pg.Shares) != 2 || pg.Shares[1].Snapshot == nil || *pg.Shares[1].Snapshot != *snap.Snapshot {
			t.Fatalf("listing with snapshots: %d", len(pg.Shares))
		}
		_, err = e.sc.Delete(ctx, nil)
		mustCode(t, err, 409, "ShareHasSnapshots")
		_, err = e.sc.Delete(ctx, &share.DeleteOptions{DeleteSnapshots: ptr(share.DeleteSnapshotsOptionTypeInclude)})
		must(t, err)
		_, err = ss.GetProperties(ctx, nil)
		mustCode(t, err, 404, "ShareNotFound")
	})
}

func TestRenameAndCopy(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		_, err := e.sc.NewDirectoryClient("a").Create(ctx, nil)
		must(t, err)
		_, err = e.sc.NewDirectoryClient("a/b").Create(ctx, nil)
		must(t, err)
		f := e.sc.NewDirectoryClient("a/b").NewFileClient("f.txt")
		_, err = f.Create(ctx, 5, nil)
		must(t, err)
		_, err = f.UploadRange(ctx, 0, body([]byte("hello")), nil)
		must(t, err)
		_, err = f.Rename(ctx, "a/g.txt", nil)
		must(t, err)
		g := e.sc.NewDirectoryClient("a").NewFileClient("g.txt")
		dl, err := g.DownloadStream(ctx, nil)
		must(t, err)
		if string(readAll(t, dl.Body)) != "hello" {
			t.Fatal("renamed content")
		}
		_, err = f.GetProperties(ctx, nil)
		mustCode(t, err, 404, "ResourceNotFound")
		// Replace only when asked.
		_, err = root.NewFileClient("h.txt").Create(ctx, 1, nil)
		must(t, err)
		_, err = g.Rename(ctx, "h.txt", nil)
		mustCode(t, err, 409, "ResourceAlreadyExists")
		_, err = g.Rename(ctx, "h.txt", &file.RenameOptions{ReplaceIfExists: ptr(true)})
		must(t, err)
		// A directory moves with its subtree.
		_, err = e.sc.NewDirectoryClient("a").Rename(ctx, "z", nil)
		must(t, err)
		_, err = e.sc.NewDirectoryClient("z/b").GetProperties(ctx, nil)
		must(t, err)
		_, err = e.sc.NewDirectoryClient("z").Rename(ctx, "z/b/inside", nil)
		if err == nil {
			t.Fatal("moved a directory into itself")
		}
		// Copy File completes at once.
		src := root.NewFileClient("h.txt")
		dst := e.sc.NewDirectoryClient("z").NewFileClient("copy.txt")
		cr, err := dst.StartCopyFromURL(ctx, src.URL(), nil)
		must(t, err)
		if *cr.CopyStatus != file.CopyStatusTypeSuccess {
			t.Fatalf("copy status %v", *cr.CopyStatus)
		}
		dl, err = dst.DownloadStream(ctx, nil)
		must(t, err)
		if string(readAll(t, dl.Body)) != "hello" || *dl.CopyID != *cr.CopyID {
			t.Fatal("copied content")
		}
		_, err = dst.AbortCopy(ctx, *cr.CopyID, nil)
		mustCode(t, err, 409, "NoPendingCopyOperation")
		// Put Range From URL (its source needs a SAS even in the account).
		_, err = root.NewFileClient("part").Create(ctx, 10, nil)
		must(t, err)
		srcSAS, err := src.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		_, err = root.NewFileClient("part").UploadRangeFromURL(ctx, srcSAS, 1, 2, 3, nil)
		must(t, err)
		dl, err = root.NewFileClient("part").DownloadStream(ctx, nil)
		must(t, err)
		if got := readAll(t, dl.Body); !bytes.Equal(got, []byte("\x00\x00ell\x00\x00\x00\x00\x00")) {
			t.Fatalf("range from url %q", got)
		}
	})
}

func TestACLAndSAS(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		now := time.Now().UTC().Truncate(time.Second)
		_, err := e.sc.SetAccessPolicy(ctx, &share.SetAccessPolicyOptions{ShareACL: []*share.SignedIdentifier{{
			ID: ptr("readers"), AccessPolicy: &share.AccessPolicy{Start: ptr(now.Add(-time.Hour)), Expiry: ptr(now.Add(time.Hour)), Permission: ptr("rl")}}}})
		must(t, err)
		ap, err := e.sc.GetAccessPolicy(ctx, nil)
		must(t, err)
		if len(ap.SignedIdentifiers) != 1 || *ap.SignedIdentifiers[0].AccessPolicy.Permission != "rl" {
			t.Fatalf("acl %v", ap.SignedIdentifiers)
		}
		f := e.sc.NewRootDirectoryClient().NewFileClient("doc.txt")
		_, err = f.Create(ctx, 3, nil)
		must(t, err)
		_, err = f.UploadRange(ctx, 0, body([]byte("abc")), nil)
		must(t, err)
		cred, err := file.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		opts := &file.ClientOptions{ClientOptions: tg.ClientOptions()}
		// Service SAS for a file, with header overrides.
		qp, err := sas.SignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: now.Add(time.Hour), Permissions: (&sas.FilePermissions{Read: true}).String(),
			ShareName: e.name, FilePath: "doc.txt", ContentType: "text/x-override"}.SignWithSharedKey(cred)
		must(t, err)
		fc, err := file.NewClientWithNoCredential(f.URL()+"?"+qp.Encode(), opts)
		must(t, err)
		dl, err := fc.DownloadStream(ctx, nil)
		must(t, err)
		if string(readAll(t, dl.Body)) != "abc" || *dl.ContentType != "text/x-override" {
			t.Fatalf("sas read: %v", *dl.ContentType)
		}
		_, err = fc.UploadRange(ctx, 0, body([]byte("x")), nil)
		mustCode(t, err, 403, "AuthorizationPermissionMismatch")
		// Service SAS for the share through the stored policy.
		qp, err = sas.SignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, Identifier: "readers", ShareName: e.name}.SignWithSharedKey(cred)
		must(t, err)
		dc, err := directory.NewClientWithNoCredential(e.sc.NewRootDirectoryClient().URL()+"?"+qp.Encode(), &directory.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		pg, err := dc.NewListFilesAndDirectoriesPager(nil).NextPage(ctx)
		must(t, err)
		if len(pg.Segment.Files) != 1 {
			t.Fatal("policy SAS listing")
		}
		_, err = dc.NewFileClient("new").Create(ctx, 1, nil)
		mustCode(t, err, 403, "AuthorizationPermissionMismatch")
		// Account SAS with ss=f.
		url, err := e.svc.GetSASURL(sas.AccountResourceTypes{Service: true, Container: true, Object: true}, sas.AccountPermissions{Read: true, List: true, Create: true, Write: true}, now.Add(time.Hour), nil)
		must(t, err)
		sc, err := service.NewClientWithNoCredential(url, &service.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		_, err = sc.NewShareClient(e.name).NewRootDirectoryClient().NewFileClient("bysas").Create(ctx, 1, nil)
		must(t, err)
		_, err = sc.NewShareClient(e.name).NewRootDirectoryClient().NewFileClient("bysas").Delete(ctx, nil)
		mustCode(t, err, 403, "AuthorizationPermissionMismatch")
		// No credentials at all.
		anon, err := file.NewClientWithNoCredential(f.URL(), opts)
		must(t, err)
		_, err = anon.GetProperties(ctx, nil)
		if err == nil {
			t.Fatal("anonymous read allowed")
		}
	})
}

func TestPermissionsAndSMBHeaders(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		sddl := "O:S-1-5-21-1-2-3-500G:S-1-5-21-1-2-3-513D:(A;;FA;;;BA)"
		cp, err := e.sc.CreatePermission(ctx, sddl, nil)
		must(t, err)
		gp, err := e.sc.GetPermission(ctx, *cp.FilePermissionKey, nil)
		must(t, err)
		if *gp.Permission != sddl {
			t.Fatalf("permission %q", *gp.Permission)
		}
		_, err = e.sc.GetPermission(ctx, "1*2", nil)
		mustCode(t, err, 400, "FileInvalidPermissionKey")
		_, err = e.sc.CreatePermission(ctx, "not sddl", nil)
		mustCode(t, err, 400, "FileInvalidPermission")
		f := e.sc.NewRootDirectoryClient().NewFileClient("p")
		ct := time.Date(2019, 2, 2, 1, 2, 3, 4500, time.UTC)
		cr, err := f.Create(ctx, 0, &file.CreateOptions{Permissions: &file.Permissions{PermissionKey: cp.FilePermissionKey},
			SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{ReadOnly: true, Archive: true}, CreationTime: &ct, LastWriteTime: &ct}})
		must(t, err)
		if *cr.FilePermissionKey != *cp.FilePermissionKey || !cr.FileCreationTime.Equal(ct) || *cr.FileAttributes != "ReadOnly | Archive" {
			t.Fatalf("created: %v %v %v", *cr.FilePermissionKey, cr.FileCreationTime, *cr.FileAttributes)
		}
		g := e.sc.NewRootDirectoryClient().NewFileClient("q")
		cr, err = g.Create(ctx, 0, &file.CreateOptions{Permissions: &file.Permissions{Permission: &sddl}})
		must(t, err)
		if *cr.FilePermissionKey != *cp.FilePermissionKey {
			t.Fatal("same SDDL, different key")
		}
		_, err = g.Create(ctx, 0, &file.CreateOptions{Permissions: &file.Permissions{PermissionKey: ptr("9*9")}})
		mustCode(t, err, 400, "FileInvalidPermissionKey")
		// Old versions required the SMB headers (UNCONFIRMED version, see
		// TestUnconfirmedSMBHeadersRequiredBefore20210608).
		resp := raw(t, tg, http.MethodPut, e.name+"/old", map[string]string{"x-ms-version": "2020-10-02", "x-ms-type": "file", "x-ms-content-length": "0"}, nil)
		wantRaw(t, resp, 400, "MissingRequiredHeader")
		resp = raw(t, tg, http.MethodPut, e.name+"/old", map[string]string{"x-ms-version": "2020-10-02", "x-ms-type": "file", "x-ms-content-length": "0",
			"x-ms-file-attributes": "None", "x-ms-file-creation-time": "now", "x-ms-file-last-write-time": "now", "x-ms-file-permission": "inherit"}, nil)
		wantRaw(t, resp, 201, "")
		resp = raw(t, tg, http.MethodPut, e.name+"/old2", map[string]string{"x-ms-type": "file", "x-ms-content-length": "0",
			"x-ms-file-attributes": "Bogus"}, nil)
		wantRaw(t, resp, 400, "InvalidHeaderValue")
		resp = raw(t, tg, http.MethodPut, e.name+"/old2", map[string]string{"x-ms-type": "file", "x-ms-content-length": "0",
			"x-ms-file-creation-time": "yesterday"}, nil)
		wantRaw(t, resp, 400, "InvalidHeaderValue")
	})
}

func TestQuotaAndStats(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := client(t, tg)
		name := harness.UniqueName("quota")
		sc := svc.NewShareClient(name)
		_, err := sc.Create(ctx, &share.CreateOptions{Quota: ptr(int32(1))})
		must(t, err)
		root := sc.NewRootDirectoryClient()
		_, err = root.NewFileClient("a").Create(ctx, 600<<20, nil)
		must(t, err)
		_, err = root.NewFileClient("b").Create(ctx, 600<<20, nil)
		mustCode(t, err, 413, "ShareSizeLimitReached")
		_, err = root.NewFileClient("b").GetProperties(ctx, nil)
		mustCode(t, err, 404, "ResourceNotFound")
		_, err = root.NewFileClient("a").Resize(ctx, 2<<30, nil)
		mustCode(t, err, 413, "ShareSizeLimitReached")
		st, err := sc.GetStatistics(ctx, nil)
		must(t, err)
		if *st.ShareUsageBytes != 600<<20 {
			t.Fatalf("usage %d", *st.ShareUsageBytes)
		}
		_, err = root.NewFileClient("a").Delete(ctx, nil)
		must(t, err)
		st, err = sc.GetStatistics(ctx, nil)
		must(t, err)
		if *st.ShareUsageBytes != 0 {
			t.Fatalf("usage after delete %d", *st.ShareUsageBytes)
		}
	})
}

func TestServicePropertiesAndCORS(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := client(t, tg)
		_, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{
			HourMetrics: &service.Metrics{Enabled: ptr(true), IncludeAPIs: ptr(true), RetentionPolicy: &service.RetentionPolicy{Enabled: ptr(true), Days: ptr(int32(3))}},
			CORS:        []*service.CORSRule{{AllowedOrigins: ptr("http://example.com"), AllowedMethods: ptr("GET,PUT"), AllowedHeaders: ptr("x-ms-*"), ExposedHeaders: ptr("x-ms-*"), MaxAgeInSeconds: ptr(int32(60))}},
			Protocol:    &service.ProtocolSettings{Smb: &service.SMBSettings{Multichannel: &service.SMBMultichannel{Enabled: ptr(true)}}},
		})
		must(t, err)
		p, err := svc.GetProperties(ctx, nil)
		must(t, err)
		if !*p.HourMetrics.Enabled || len(p.CORS) != 1 || *p.CORS[0].MaxAgeInSeconds != 60 || p.Protocol == nil || !*p.Protocol.Smb.Multichannel.Enabled {
			t.Fatalf("properties: %+v", p)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodOptions, tg.FileURL+"/anyshare/file", nil)
		must(t, err)
		req.Header.Set("Origin", "http://example.com")
		req.Header.Set("Access-Control-Request-Method", "PUT")
		resp, err := tg.HTTP.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://example.com" {
			t.Fatalf("preflight %d %v", resp.StatusCode, resp.Header)
		}
		req.Header.Set("Origin", "http://evil.com")
		resp, err = tg.HTTP.Do(req)
		must(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 || resp.Header.Get("x-ms-error-code") != "CorsPreflightFailure" {
			t.Fatalf("preflight from another origin: %d", resp.StatusCode)
		}
	})
}

func TestNamesAndLimits(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		for _, bad := range []string{"a:b", "a|b", "a<b", "a*b", "a?b", `a"b`, "CON", "lpt1.txt", "..", "x\x01y"} {
			_, err := root.NewFileClient(bad).Create(ctx, 1, nil)
			mustCode(t, err, 400, "InvalidResourceName")
		}
		_, err := root.NewFileClient(strings.Repeat("n", 256)).Create(ctx, 1, nil)
		mustCode(t, err, 400, "InvalidResourceName")
		_, err = root.NewFileClient(strings.Repeat("n", 255)).Create(ctx, 1, nil)
		must(t, err)
		deep := strings.Repeat("d/", 251) + "f"
		_, err = root.NewFileClient(deep).Create(ctx, 1, nil)
		mustCode(t, err, 400, "InvalidFileOrDirectoryPathName")
		long := strings.Repeat(strings.Repeat("l", 200)+"/", 11)
		_, err = e.sc.NewDirectoryClient(long).Create(ctx, nil)
		mustCode(t, err, 400, "InvalidFileOrDirectoryPathName")
		_, err = e.svc.CreateShare(ctx, "Bad_Name", nil)
		mustCode(t, err, 400, "InvalidResourceName")
		_, err = e.svc.CreateShare(ctx, "a--b", nil)
		mustCode(t, err, 400, "InvalidResourceName")
		// Bad ranges.
		_, err = root.NewFileClient("r").Create(ctx, 100, nil)
		must(t, err)
		for _, rng := range []string{"bytes=5-1", "bytes=a-b", "5-6", "bytes=-5"} {
			resp := raw(t, tg, http.MethodPut, e.name+"/r?comp=range", map[string]string{"x-ms-range": rng, "x-ms-write": "clear"}, nil)
			wantRaw(t, resp, 400, "InvalidHeaderValue")
		}
		resp := raw(t, tg, http.MethodPut, e.name+"/r?comp=range", map[string]string{"x-ms-range": "bytes=0-1", "x-ms-write": "update"}, []byte("abc"))
		wantRaw(t, resp, 400, "InvalidHeaderValue")
		resp = raw(t, tg, http.MethodGet, e.name+"/r", map[string]string{"x-ms-range": "bytes=100-200"}, nil)
		wantRaw(t, resp, 416, "InvalidRange")
		// Handles: empty lists, force close closes nothing.
		lh, err := root.ListHandles(ctx, &directory.ListHandlesOptions{Recursive: ptr(true)})
		must(t, err)
		if len(lh.Handles) != 0 {
			t.Fatal("handles listed")
		}
		fc, err := root.ForceCloseHandles(ctx, "*", &directory.ForceCloseHandlesOptions{Recursive: ptr(true)})
		must(t, err)
		if *fc.NumberOfHandlesClosed != 0 {
			t.Fatal("closed handles")
		}
	})
}

// TestSASResponseOverrides: a file SAS's rscc, rscd, rsce, rscl and rsct
// replace the response headers of Get File.
func TestSASResponseOverrides(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		f := e.sc.NewRootDirectoryClient().NewFileClient("o.txt")
		_, err := f.Create(ctx, 2, &file.CreateOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: ptr("text/plain"), ContentLanguage: ptr("en")}})
		must(t, err)
		cred, err := file.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		qp, err := sas.SignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour), Permissions: (&sas.FilePermissions{Read: true}).String(),
			ShareName: e.name, FilePath: "o.txt", CacheControl: "no-cache", ContentDisposition: "attachment", ContentEncoding: "deflate",
			ContentLanguage: "de", ContentType: "application/x-test"}.SignWithSharedKey(cred)
		must(t, err)
		fc, err := file.NewClientWithNoCredential(f.URL()+"?"+qp.Encode(), &file.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		dl, err := fc.DownloadStream(ctx, nil)
		must(t, err)
		dl.Body.Close()
		if *dl.CacheControl != "no-cache" || *dl.ContentDisposition != "attachment" || *dl.ContentEncoding != "deflate" ||
			*dl.ContentLanguage != "de" || *dl.ContentType != "application/x-test" {
			t.Fatalf("overrides: %v %v %v %v %v", *dl.CacheControl, *dl.ContentDisposition, *dl.ContentEncoding, *dl.ContentLanguage, *dl.ContentType)
		}
		// Without the SAS the stored values come back.
		dl, err = f.DownloadStream(ctx, nil)
		must(t, err)
		dl.Body.Close()
		if *dl.ContentType != "text/plain" || *dl.ContentLanguage != "en" || dl.CacheControl != nil {
			t.Fatalf("stored: %v %v", *dl.ContentType, *dl.ContentLanguage)
		}
	})
}

// TestCopyFileFromBlob: Copy File takes a blob of the same server as its
// source, with Shared Key for the same account or a Blob SAS in the URL.
func TestCopyFileFromBlob(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		bc := tg.Blob(t)
		cn := harness.UniqueName("src")
		_, err := bc.CreateContainer(ctx, cn, nil)
		must(t, err)
		content := bytes.Repeat([]byte("blob->file "), 10000)
		_, err = bc.UploadBuffer(ctx, cn, "b.bin", content, nil)
		must(t, err)
		blobClient := bc.ServiceClient().NewContainerClient(cn).NewBlobClient("b.bin")
		dst := e.sc.NewRootDirectoryClient().NewFileClient("fromblob")
		cr, err := dst.StartCopyFromURL(ctx, blobClient.URL(), nil)
		must(t, err)
		if *cr.CopyStatus != file.CopyStatusTypeSuccess {
			t.Fatalf("status %v", *cr.CopyStatus)
		}
		dl, err := dst.DownloadStream(ctx, nil)
		must(t, err)
		if !bytes.Equal(readAll(t, dl.Body), content) {
			t.Fatal("copied content differs")
		}
		// Through a Blob SAS the copy is checked against the SAS.
		sasURL, err := blobClient.GetSASURL(blobsas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		_, err = e.sc.NewRootDirectoryClient().NewFileClient("viasas").StartCopyFromURL(ctx, sasURL, nil)
		must(t, err)
		// A caller holding only a SAS cannot copy a blob the URL gives no
		// access to: read anonymously, the private blob does not show
		// itself (404).
		fcred, err := file.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		qp, err := sas.SignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
			Permissions: (&sas.FilePermissions{Create: true, Write: true}).String(), ShareName: e.name, FilePath: "bysas"}.SignWithSharedKey(fcred)
		must(t, err)
		viaSAS, err := file.NewClientWithNoCredential(e.sc.NewRootDirectoryClient().NewFileClient("bysas").URL()+"?"+qp.Encode(), &file.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		_, err = viaSAS.StartCopyFromURL(ctx, blobClient.URL(), nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		_, err = viaSAS.StartCopyFromURL(ctx, sasURL, nil)
		must(t, err)
		missing := bc.ServiceClient().NewContainerClient(cn).NewBlobClient("nope").URL()
		_, err = e.sc.NewRootDirectoryClient().NewFileClient("x").StartCopyFromURL(ctx, missing, nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
	})
}

// TestPutRangeFromBlob: Put Range From URL takes its bytes from a blob of
// the same server.
func TestPutRangeFromBlob(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		bc := tg.Blob(t)
		cn := harness.UniqueName("src")
		_, err := bc.CreateContainer(ctx, cn, nil)
		must(t, err)
		_, err = bc.UploadBuffer(ctx, cn, "b", []byte("0123456789"), nil)
		must(t, err)
		// The source needs a SAS even in the account.
		src, err := bc.ServiceClient().NewContainerClient(cn).NewBlobClient("b").GetSASURL(blobsas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		f := e.sc.NewRootDirectoryClient().NewFileClient("part")
		_, err = f.Create(ctx, 6, nil)
		must(t, err)
		_, err = f.UploadRangeFromURL(ctx, src, 3, 1, 4, nil)
		must(t, err)
		dl, err := f.DownloadStream(ctx, nil)
		must(t, err)
		if got := readAll(t, dl.Body); !bytes.Equal(got, []byte("\x003456\x00")) {
			t.Fatalf("got %q", got)
		}
		_, err = f.UploadRangeFromURL(ctx, src, 8, 0, 4, nil)
		mustCode(t, err, 416, "InvalidRange")
		// Without a SAS: a private blob does not show itself; a blob of a
		// public container is read anonymously.
		plain := bc.ServiceClient().NewContainerClient(cn).NewBlobClient("b").URL()
		_, err = f.UploadRangeFromURL(ctx, plain, 0, 0, 2, nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		_, err = bc.ServiceClient().NewContainerClient(cn).SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{Access: ptr(container.PublicAccessTypeBlob)})
		must(t, err)
		_, err = f.UploadRangeFromURL(ctx, plain, 0, 0, 2, nil)
		must(t, err)
	})
}
