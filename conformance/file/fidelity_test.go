package file_test

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// shareSAS signs a service SAS for the whole share (sr=s) with perms.
func shareSAS(t *testing.T, tg *harness.Target, shareName string, perms sas.SharePermissions) string {
	t.Helper()
	cred, err := file.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	qp, err := sas.SignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		Permissions: perms.String(), ShareName: shareName}.SignWithSharedKey(cred)
	must(t, err)
	return qp.Encode()
}

// TestShareSASCannotReachShareOperations: a service SAS for a share
// (sr=s), even with every permission, reaches the share's files and
// directories but no share-level operation: Azure answers those 403
// AuthorizationFailure (share properties, metadata, deletion and the rest
// need an account SAS or a key).
func TestShareSASCannotReachShareOperations(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		q := shareSAS(t, tg, e.name, sas.SharePermissions{Read: true, Create: true, Write: true, Delete: true, List: true})
		sc, err := share.NewClientWithNoCredential(e.sc.URL()+"?"+q, &share.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		_, err = sc.GetProperties(ctx, nil)
		mustCode(t, err, 403, "AuthorizationFailure")
		_, err = sc.SetMetadata(ctx, &share.SetMetadataOptions{Metadata: map[string]*string{"a": ptr("b")}})
		mustCode(t, err, 403, "AuthorizationFailure")
		_, err = sc.SetProperties(ctx, &share.SetPropertiesOptions{Quota: ptr(int32(5))})
		mustCode(t, err, 403, "AuthorizationFailure")
		_, err = sc.GetStatistics(ctx, nil)
		mustCode(t, err, 403, "AuthorizationFailure")
		_, err = sc.CreateSnapshot(ctx, nil)
		mustCode(t, err, 403, "AuthorizationFailure")
		_, err = sc.GetAccessPolicy(ctx, nil)
		mustCode(t, err, 403, "AuthorizationFailure")
		_, err = sc.Delete(ctx, nil)
		mustCode(t, err, 403, "AuthorizationFailure")
		// The share's content stays within reach.
		_, err = sc.NewRootDirectoryClient().NewFileClient("f").Create(ctx, 1, nil)
		must(t, err)
		pg, err := sc.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil).NextPage(ctx)
		must(t, err)
		if len(pg.Segment.Files) != 1 {
			t.Fatalf("listing through the share SAS: %d files", len(pg.Segment.Files))
		}
		_, err = e.sc.GetProperties(ctx, nil)
		must(t, err)
	})
}

// TestCopySourceAuthorization: Put Range From URL reads its source only
// with the source's own credentials, a SAS in its URL or an
// x-ms-copy-source-authorization bearer token, even in the caller's
// account (Azure: the source must be public or authorized with a SAS);
// without any it is 404 CannotVerifyCopySource (the source, read
// anonymously, does not show itself), with a SAS that does not allow the
// read 403 CannotVerifyCopySource. Copy File reads a file of the caller's
// own account with the caller's Shared Key, as the SDK's own recorded
// tests do on Azure; a SAS caller needs a SAS for the source too.
func TestCopySourceAuthorization(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		src := root.NewFileClient("src")
		_, err := src.Create(ctx, 4, nil)
		must(t, err)
		_, err = src.UploadRange(ctx, 0, body([]byte("abcd")), nil)
		must(t, err)
		dst := root.NewFileClient("dst")
		_, err = dst.Create(ctx, 4, nil)
		must(t, err)
		_, err = dst.UploadRangeFromURL(ctx, src.URL(), 0, 0, 4, nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		noRead, err := src.GetSASURL(sas.FilePermissions{Write: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		_, err = dst.UploadRangeFromURL(ctx, noRead, 0, 0, 4, nil)
		mustCode(t, err, 403, "CannotVerifyCopySource")
		read, err := src.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		_, err = dst.UploadRangeFromURL(ctx, read, 0, 0, 4, nil)
		must(t, err)
		// A copy-source authorization that is no bearer token.
		_, err = dst.UploadRangeFromURL(ctx, src.URL(), 0, 0, 4, &file.UploadRangeFromURLOptions{CopySourceAuthorization: ptr("SharedKey " + tg.Account + ":c2lnbmF0dXJl")})
		mustCode(t, err, 400, "InvalidHeaderValue")
		// Copy File: Shared Key covers a file of its own account.
		_, err = root.NewFileClient("copy").StartCopyFromURL(ctx, src.URL(), nil)
		must(t, err)
		// A share SAS caller does not.
		q := shareSAS(t, tg, e.name, sas.SharePermissions{Read: true, Create: true, Write: true})
		viaSAS, err := file.NewClientWithNoCredential(root.NewFileClient("bysas").URL()+"?"+q, &file.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		_, err = viaSAS.StartCopyFromURL(ctx, src.URL(), nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		_, err = viaSAS.StartCopyFromURL(ctx, read, nil)
		must(t, err)
	})
}

// TestCreateFileWithBody: Create File with a request body (the optional
// body of the newer versions) writes it as the file's first bytes, checks
// Content-MD5 (400 Md5Mismatch) and returns the body's MD5; more than 4
// MiB is 413 RequestBodyTooLarge; without a body the file reads as zeros
// and no Content-MD5 comes back.
func TestCreateFileWithBody(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		content := []byte("hello azure file")
		sum := md5.Sum(content)
		f := root.NewFileClient("withbody")
		resp, err := f.Create(ctx, 20, &file.CreateOptions{OptionalBody: body(content), ContentMD5: sum[:]})
		must(t, err)
		if !bytes.Equal(resp.ContentMD5, sum[:]) {
			t.Fatalf("Content-MD5 %x, want %x", resp.ContentMD5, sum)
		}
		dl, err := f.DownloadStream(ctx, nil)
		must(t, err)
		if got := readAll(t, dl.Body); !bytes.Equal(got, append(content, 0, 0, 0, 0)) {
			t.Fatalf("content %q", got)
		}
		_, err = root.NewFileClient("badmd5").Create(ctx, 16, &file.CreateOptions{OptionalBody: body(content), ContentMD5: []byte("0123456789abcdef")})
		mustCode(t, err, 400, "Md5Mismatch")
		_, err = root.NewFileClient("badmd5").GetProperties(ctx, nil)
		mustCode(t, err, 404, "ResourceNotFound")
		big := make([]byte, 4<<20+1)
		_, err = root.NewFileClient("big").Create(ctx, int64(len(big)), &file.CreateOptions{OptionalBody: body(big)})
		mustCode(t, err, 413, "RequestBodyTooLarge")
		exact := bytes.Repeat([]byte("z"), 4<<20)
		_, err = root.NewFileClient("exact").Create(ctx, int64(len(exact)), &file.CreateOptions{OptionalBody: body(exact)})
		must(t, err)
		dl, err = root.NewFileClient("exact").DownloadStream(ctx, nil)
		must(t, err)
		if !bytes.Equal(readAll(t, dl.Body), exact) {
			t.Fatal("4 MiB body differs")
		}
		resp, err = root.NewFileClient("nobody").Create(ctx, 8, nil)
		must(t, err)
		if resp.ContentMD5 != nil {
			t.Fatalf("Content-MD5 without a body: %x", resp.ContentMD5)
		}
	})
}

// sampleBinary is a self-relative security descriptor (owner, group and
// a DACL of three allow ACEs), base64, as the binary permission format
// carries it.
const sampleBinary = "AQAUhGwAAACIAAAAAAAAABQAAAACAFgAAwAAAAAAFAD/AR8AAQEAAAAAAAUSAAAAAAAYAP8BHwABAgAAAAAABSAAAAAgAgAAAAAkAKkAEgABBQAAAAAABRUAAABZUbgXZnJdJWRjOwuMmS4AAQUAAAAAAAUVAAAAoGXPfnhLm1/nfIdwr/1IAQEFAAAAAAAFFQAAAKBlz354S5tf53yHcAECAAA="

// TestBinaryPermissionFormat: x-ms-file-permission-format: binary is
// accepted on Create File, Rename File, Set File Properties and Create
// Permission, and Get Permission returns a permission in the format asked
// for (the binary one decodes to the same SDDL); a descriptor that does
// not decode is 400 FileInvalidPermission.
func TestBinaryPermissionFormat(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		binFmt := ptr(file.FilePermissionFormatBinary)
		f := root.NewFileClient("bin")
		cr, err := f.Create(ctx, 1, &file.CreateOptions{FilePermissionFormat: binFmt, Permissions: &file.Permissions{Permission: ptr(sampleBinary)}})
		must(t, err)
		sddlResp, err := e.sc.GetPermission(ctx, *cr.FilePermissionKey, nil)
		must(t, err)
		const want = "O:S-1-5-21-2127521184-1604012920-1887927527-21560751G:S-1-5-21-2127521184-1604012920-1887927527-513" +
			"D:AI(A;;0x1f01ff;;;S-1-5-18)(A;;0x1f01ff;;;S-1-5-32-544)(A;;0x1200a9;;;S-1-5-21-397955417-626881126-188441444-3053964)"
		if *sddlResp.Permission != want {
			t.Fatalf("SDDL of the binary permission: %s", *sddlResp.Permission)
		}
		binResp, err := e.sc.GetPermission(ctx, *cr.FilePermissionKey, &share.GetPermissionOptions{FilePermissionFormat: ptr(share.FilePermissionFormatBinary)})
		must(t, err)
		if binResp.Format == nil || *binResp.Format != share.FilePermissionFormatBinary {
			t.Fatalf("format %v", binResp.Format)
		}
		// The binary answer is a permission of its own: created again (raw:
		// azfile sends no format on Create Permission) it has the same key.
		resp := raw(t, tg, http.MethodPut, e.name+"?restype=share&comp=filepermission", map[string]string{"Content-Type": "application/json"},
			[]byte(`{"permission": "`+*binResp.Permission+`", "format": "binary"}`))
		wantRaw(t, resp, 201, "")
		if k := resp.Header.Get("x-ms-file-permission-key"); k != *cr.FilePermissionKey {
			t.Fatalf("binary round trip: key %s, want %s", k, *cr.FilePermissionKey)
		}
		_, err = f.SetHTTPHeaders(ctx, &file.SetHTTPHeadersOptions{FilePermissionFormat: binFmt, Permissions: &file.Permissions{Permission: ptr(sampleBinary)}})
		must(t, err)
		_, err = f.Rename(ctx, "bin2", &file.RenameOptions{FilePermissionFormat: binFmt, Permissions: &file.Permissions{Permission: ptr(sampleBinary)}})
		must(t, err)
		_, err = root.NewFileClient("bad").Create(ctx, 1, &file.CreateOptions{FilePermissionFormat: binFmt, Permissions: &file.Permissions{Permission: ptr("AQAU")}})
		mustCode(t, err, 400, "FileInvalidPermission")
		_, err = root.NewFileClient("bad").Create(ctx, 1, &file.CreateOptions{FilePermissionFormat: binFmt, Permissions: &file.Permissions{Permission: ptr("not base64!")}})
		mustCode(t, err, 400, "FileInvalidPermission")
	})
}

// TestContentMD5StoredAsGiven: the x-ms-content-md5 of Create File and Set
// File Properties is stored and returned as given, whatever its length
// (the SDK's own tests set a 24-byte value); it is not base64-checked
// beyond being base64.
func TestContentMD5StoredAsGiven(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		f := e.sc.NewRootDirectoryClient().NewFileClient("md5")
		long := []byte("MDAwMDAwMDAwMDAwMDAwMA==")
		_, err := f.Create(ctx, 3, &file.CreateOptions{HTTPHeaders: &file.HTTPHeaders{ContentMD5: long}})
		must(t, err)
		p, err := f.GetProperties(ctx, nil)
		must(t, err)
		if !bytes.Equal(p.ContentMD5, long) {
			t.Fatalf("created with %x", p.ContentMD5)
		}
		short := []byte("abc")
		_, err = f.SetHTTPHeaders(ctx, &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentMD5: short}})
		must(t, err)
		p, err = f.GetProperties(ctx, nil)
		must(t, err)
		if !bytes.Equal(p.ContentMD5, short) {
			t.Fatalf("set to %x", p.ContentMD5)
		}
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/md5?comp=properties", map[string]string{"x-ms-content-md5": "not base64!"}, nil), 400, "InvalidMd5")
	})
}

// TestPutRangeFromURLReturnsCRC64: Put Range From URL answers with the
// x-ms-content-crc64 of the range it wrote.
func TestPutRangeFromURLReturnsCRC64(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		content := bytes.Repeat([]byte("0123456789abcdef"), 512)
		src := root.NewFileClient("src")
		_, err := src.Create(ctx, int64(len(content)), &file.CreateOptions{OptionalBody: body(content)})
		must(t, err)
		srcURL, err := src.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		dst := root.NewFileClient("dst")
		_, err = dst.Create(ctx, 8192, nil)
		must(t, err)
		resp, err := dst.UploadRangeFromURL(ctx, srcURL, 100, 0, 4000, nil)
		must(t, err)
		want := crc64.Checksum(content[100:4100], crc64.MakeTable(0x9A6C9329AC4BC9B5))
		if len(resp.XMSContentCRC64) != 8 || binary.LittleEndian.Uint64(resp.XMSContentCRC64) != want {
			t.Fatalf("x-ms-content-crc64 %x, want %x", resp.XMSContentCRC64, want)
		}
	})
}

// TestCopyFileSMBProperties: x-ms-file-copy-set-archive adds Archive to
// the attributes given; x-ms-file-change-time: source copies the source's
// change time; a ReadOnly destination is 409 ReadOnlyAttribute unless
// x-ms-file-copy-ignore-readonly; permission copy mode override without a
// permission or key is 400 MissingRequiredHeader.
func TestCopyFileSMBProperties(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		src := root.NewFileClient("src")
		changed := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
		_, err := src.Create(ctx, 0, &file.CreateOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{ReadOnly: true, Hidden: true}, ChangeTime: &changed}})
		must(t, err)
		attrs := func(f *file.Client) *file.NTFSFileAttributes {
			t.Helper()
			p, err := f.GetProperties(ctx, nil)
			must(t, err)
			a, err := file.ParseNTFSFileAttributes(p.FileAttributes)
			must(t, err)
			return a
		}
		for _, archive := range []bool{true, false} {
			dst := root.NewFileClient(fmt.Sprintf("archive-%v", archive))
			_, err = dst.StartCopyFromURL(ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
				Attributes: file.DestinationCopyFileAttributes{System: true, ReadOnly: true}, SetArchiveAttribute: ptr(archive)}})
			must(t, err)
			if a := attrs(dst); a.Archive != archive || !a.System || !a.ReadOnly || a.Hidden {
				t.Fatalf("set archive %v: attributes %+v", archive, a)
			}
		}
		// Change time from the source.
		dst := root.NewFileClient("change")
		_, err = dst.StartCopyFromURL(ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{ChangeTime: file.SourceCopyFileChangeTime{}}})
		must(t, err)
		p, err := dst.GetProperties(ctx, nil)
		must(t, err)
		if !p.FileChangeTime.Equal(changed) {
			t.Fatalf("change time %v, want %v", p.FileChangeTime, changed)
		}
		// A ReadOnly destination.
		ro := root.NewFileClient("readonly")
		_, err = ro.Create(ctx, 0, &file.CreateOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{ReadOnly: true}}})
		must(t, err)
		_, err = ro.StartCopyFromURL(ctx, src.URL(), nil)
		mustCode(t, err, 409, "ReadOnlyAttribute")
		_, err = ro.StartCopyFromURL(ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{IgnoreReadOnly: ptr(true)}})
		must(t, err)
		// Override needs a permission.
		_, err = root.NewFileClient("override").StartCopyFromURL(ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
			PermissionCopyMode: ptr(file.PermissionCopyModeTypeOverride)}})
		mustCode(t, err, 400, "MissingRequiredHeader")
	})
}

// TestPropertySemanticsRestore: x-ms-file-property-semantics: Restore
// (with a permission) leaves the attribute flags as given: no Archive
// added to a new file or directory; New and the default add it to a file.
func TestPropertySemanticsRestore(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		perm := "O:S-1-5-21-2127521184-1604012920-1887927527-21560751G:S-1-5-21-2127521184-1604012920-1887927527-513D:AI(A;;FA;;;SY)(A;;FA;;;BA)"
		for i, ps := range []*file.PropertySemantics{nil, ptr(file.FilePropertySemanticsNew), ptr(file.FilePropertySemanticsRestore)} {
			opts := &file.CreateOptions{FilePropertySemantics: ps}
			restore := ps != nil && *ps == file.FilePropertySemanticsRestore
			if restore {
				opts.Permissions = &file.Permissions{Permission: ptr(perm)}
			}
			cr, err := root.NewFileClient(fmt.Sprint("f", i)).Create(ctx, 1, opts)
			must(t, err)
			a, err := file.ParseNTFSFileAttributes(cr.FileAttributes)
			must(t, err)
			if a.Archive == restore {
				t.Errorf("semantics %d: attributes %s", i, *cr.FileAttributes)
			}
		}
		dr, err := e.sc.NewDirectoryClient("d").Create(ctx, &directory.CreateOptions{FilePropertySemantics: ptr(directory.FilePropertySemanticsRestore),
			FilePermissions: &file.Permissions{Permission: ptr(perm)}})
		must(t, err)
		if strings.Contains(*dr.FileAttributes, "Archive") || !strings.Contains(*dr.FileAttributes, "Directory") {
			t.Errorf("restored directory: %s", *dr.FileAttributes)
		}
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/bad", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1", "x-ms-file-property-semantics": "Sometimes"}, nil), 400, "InvalidHeaderValue")
	})
}

// TestListFilesEntries: every entry of List Files and Directories carries
// its FileId, asked for or not; names XML cannot carry (U+FFFE, U+FFFF)
// come back percent-encoded with Encoded="true" and intact (in the
// prefix, and across continuation markers); maxresults below 1 is 400
// OutOfRangeQueryParameterValue.
func TestListFilesEntries(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		dirName, f0, f1 := "directory\uFFFF", "file0\uFFFE", "file1\uFFFE"
		_, err := e.sc.NewDirectoryClient(dirName).Create(ctx, nil)
		must(t, err)
		for _, n := range []string{f0, f1} {
			_, err = root.NewFileClient(n).Create(ctx, 1, nil)
			must(t, err)
		}
		pg, err := root.NewListFilesAndDirectoriesPager(nil).NextPage(ctx)
		must(t, err)
		if len(pg.Segment.Directories) != 1 || *pg.Segment.Directories[0].Name != dirName || pg.Segment.Directories[0].ID == nil {
			t.Fatalf("directories %+v", pg.Segment.Directories)
		}
		if len(pg.Segment.Files) != 2 || *pg.Segment.Files[0].Name != f0 || pg.Segment.Files[0].ID == nil || pg.Segment.Files[1].ID == nil {
			t.Fatalf("files %+v", pg.Segment.Files)
		}
		var names []string
		pager := root.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{MaxResults: ptr(int32(1))})
		for pager.More() {
			pg, err := pager.NextPage(ctx)
			must(t, err)
			for _, d := range pg.Segment.Directories {
				names = append(names, *d.Name)
			}
			for _, f := range pg.Segment.Files {
				names = append(names, *f.Name)
			}
		}
		if strings.Join(names, ",") != dirName+","+f0+","+f1 {
			t.Fatalf("paged names %q", names)
		}
		pg, err = root.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{Prefix: ptr(dirName)}).NextPage(ctx)
		must(t, err)
		if pg.Prefix == nil || *pg.Prefix != dirName || len(pg.Segment.Directories) != 1 || len(pg.Segment.Files) != 0 {
			t.Fatalf("prefix listing %+v", pg)
		}
		resp := raw(t, tg, http.MethodGet, e.name+"?restype=directory&comp=list", nil, nil)
		wantRaw(t, resp, 200, "")
		if b := string(readAll(t, resp.Body)); !strings.Contains(b, `<Name Encoded="true">file0%EF%BF%BE</Name>`) {
			t.Fatalf("listing %s", b)
		}
		for _, v := range []string{"-1", "0"} {
			wantRaw(t, raw(t, tg, http.MethodGet, e.name+"?restype=directory&comp=list&maxresults="+v, nil, nil), 400, "OutOfRangeQueryParameterValue")
		}
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"?restype=directory&comp=list&maxresults=x", nil, nil), 400, "InvalidQueryParameterValue")
	})
}

// TestRenameSourceTrailingDots: without x-ms-source-allow-trailing-dot
// the trailing dots of the rename source are trimmed, so a source named
// with them is not found (404 ResourceNotFound, as Azure); with the header
// it is renamed.
func TestRenameSourceTrailingDots(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc, err := service.NewClientWithSharedKeyCredential(tg.FileURL+"/", mustCred(t, tg), &service.ClientOptions{ClientOptions: tg.ClientOptions(), AllowTrailingDot: ptr(true)})
		must(t, err)
		name := harness.UniqueName("s")
		_, err = svc.CreateShare(ctx, name, nil)
		must(t, err)
		root := svc.NewShareClient(name).NewRootDirectoryClient()
		_, err = root.NewFileClient("src..").Create(ctx, 1, nil)
		must(t, err)
		_, err = root.NewFileClient("src..").Rename(ctx, "dst..", nil)
		mustCode(t, err, 404, "ResourceNotFound")
		_, err = svc.NewShareClient(name).NewDirectoryClient("dir..").Create(ctx, nil)
		must(t, err)
		_, err = svc.NewShareClient(name).NewDirectoryClient("dir..").Rename(ctx, "dir1..", nil)
		mustCode(t, err, 404, "ResourceNotFound")
		wantRaw(t, raw(t, tg, http.MethodPut, name+"/dst..?comp=rename", map[string]string{"x-ms-file-rename-source": "src..",
			"x-ms-source-allow-trailing-dot": "true", "x-ms-allow-trailing-dot": "true"}, nil), 200, "")
	})
}

func mustCred(t *testing.T, tg *harness.Target) *service.SharedKeyCredential {
	t.Helper()
	c, err := service.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	return c
}

// TestRangeListAcrossRename: Get Range List with prevsharesnapshot for a
// file renamed since that snapshot is 409 PreviousSnapshotNotFound unless
// x-ms-file-support-rename is true, which follows the file to its old
// name; a file that did not exist in the previous snapshot is 409 too.
func TestRangeListAcrossRename(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		f := root.NewFileClient("file1")
		_, err := f.Create(ctx, 512, nil)
		must(t, err)
		s1, err := e.sc.CreateSnapshot(ctx, nil)
		must(t, err)
		_, err = f.UploadRange(ctx, 0, body(bytes.Repeat([]byte("x"), 512)), nil)
		must(t, err)
		_, err = f.Rename(ctx, "file2", nil)
		must(t, err)
		_, err = root.NewFileClient("fresh").Create(ctx, 512, nil)
		must(t, err)
		s2, err := e.sc.CreateSnapshot(ctx, nil)
		must(t, err)
		renamed := root.NewFileClient("file2")
		for _, sr := range []*bool{nil, ptr(false)} {
			_, err = renamed.GetRangeList(ctx, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot, ShareSnapshot: s2.Snapshot, SupportRename: sr})
			mustCode(t, err, 409, "PreviousSnapshotNotFound")
		}
		rl, err := renamed.GetRangeList(ctx, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot, ShareSnapshot: s2.Snapshot, SupportRename: ptr(true)})
		must(t, err)
		if len(rl.Ranges) != 1 || *rl.Ranges[0].Start != 0 || *rl.Ranges[0].End != 511 {
			t.Fatalf("ranges %+v", rl.Ranges)
		}
		_, err = root.NewFileClient("fresh").GetRangeList(ctx, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot, ShareSnapshot: s2.Snapshot})
		mustCode(t, err, 409, "PreviousSnapshotNotFound")
		_, err = e.sc.Delete(ctx, &share.DeleteOptions{DeleteSnapshots: ptr(share.DeleteSnapshotsOptionTypeInclude)})
		must(t, err)
	})
}

// TestFileErrorCodesAndOrder: None|ReadOnly attributes are 400
// InvalidHeaderValue; a negative size on Set File Properties (a resize)
// is 400 OutOfRangeInput; Abort Copy checks the copy id before the file
// (400 InvalidQueryParameterValue on a missing file); a missing copy
// source of the caller's account is 404 ResourceNotFound; Create Snapshot
// ignores a sharesnapshot, even a malformed one.
func TestFileErrorCodesAndOrder(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		root := e.sc.NewRootDirectoryClient()
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/attrs", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1", "x-ms-file-attributes": "None|ReadOnly"}, nil), 400, "InvalidHeaderValue")
		f := root.NewFileClient("f")
		_, err := f.Create(ctx, 0, nil)
		must(t, err)
		_, err = f.Resize(ctx, -4, nil)
		mustCode(t, err, 400, "OutOfRangeInput")
		_, err = root.NewFileClient("nothere").AbortCopy(ctx, "copynotstarted", nil)
		mustCode(t, err, 400, "InvalidQueryParameterValue")
		_, err = root.NewFileClient("nothere").AbortCopy(ctx, "d8f3a8f0-7c3e-4a53-9f43-0a7b9b1c2d3e", nil)
		mustCode(t, err, 404, "ResourceNotFound")
		_, err = root.NewFileClient("dst").StartCopyFromURL(ctx, root.NewFileClient("nosrc").URL(), nil)
		mustCode(t, err, 404, "ResourceNotFound")
		snap, err := e.sc.WithSnapshot(time.Date(2023, 3, 31, 20, 0, 0, 0, time.UTC).String())
		must(t, err)
		cr, err := snap.CreateSnapshot(ctx, nil)
		must(t, err)
		if cr.Snapshot == nil || *cr.Snapshot == "" {
			t.Fatal("no snapshot")
		}
		again, err := e.sc.WithSnapshot(*cr.Snapshot)
		must(t, err)
		_, err = again.CreateSnapshot(ctx, nil)
		must(t, err)
		_, err = e.sc.Delete(ctx, &share.DeleteOptions{DeleteSnapshots: ptr(share.DeleteSnapshotsOptionTypeInclude)})
		must(t, err)
	})
}

// TestClearedContentTypeStaysCleared: a new file reports
// application/octet-stream; Set File Properties without a Content-Type
// clears it, and it stays cleared (no default comes back).
func TestClearedContentTypeStaysCleared(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		f := e.sc.NewRootDirectoryClient().NewFileClient("f")
		_, err := f.Create(ctx, 4, nil)
		must(t, err)
		p, err := f.GetProperties(ctx, nil)
		must(t, err)
		if p.ContentType == nil || *p.ContentType != "application/octet-stream" {
			t.Fatalf("new file's Content-Type %v", p.ContentType)
		}
		_, err = f.SetHTTPHeaders(ctx, &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentLanguage: ptr("en")}})
		must(t, err)
		p, err = f.GetProperties(ctx, nil)
		must(t, err)
		if p.ContentType != nil {
			t.Fatalf("cleared Content-Type came back as %q", *p.ContentType)
		}
		dl, err := f.DownloadStream(ctx, nil)
		must(t, err)
		dl.Body.Close()
		if dl.ContentType != nil {
			t.Fatalf("download Content-Type %q", *dl.ContentType)
		}
	})
}
