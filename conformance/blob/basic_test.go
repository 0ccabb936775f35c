package blob_test

import (
	"bytes"
	"crypto/md5"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func TestPutGetBlob(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("dir/hello.txt")
		data := []byte("hello, lazuli")
		up, err := bb.Upload(ctx, body(data), &blockblob.UploadOptions{
			HTTPHeaders: &blob.HTTPHeaders{BlobContentType: ptr("text/plain"), BlobCacheControl: ptr("no-cache")},
			Metadata:    map[string]*string{"color": ptr("blue")},
		})
		must(t, err)
		sum := md5.Sum(data)
		if !bytes.Equal(up.ContentMD5, sum[:]) {
			t.Fatalf("Content-MD5 %x", up.ContentMD5)
		}
		etag := string(*up.ETag)
		if !strings.HasPrefix(etag, `"0x`) || !strings.HasSuffix(etag, `"`) {
			t.Fatalf("ETag %s is not quoted hex", etag)
		}
		got, err := bb.DownloadStream(ctx, nil)
		must(t, err)
		if b := readAll(t, got.Body); !bytes.Equal(b, data) {
			t.Fatalf("body %q", b)
		}
		if *got.ContentType != "text/plain" || *got.CacheControl != "no-cache" || *got.ETag != *up.ETag || *got.BlobType != blob.BlobTypeBlockBlob {
			t.Fatalf("headers %+v", got)
		}
		props, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if *props.ContentLength != int64(len(data)) || *props.LeaseState != "available" || *props.LeaseStatus != "unlocked" {
			t.Fatalf("props %+v", props)
		}
		if v := lookup(props.Metadata, "color"); v != "blue" {
			t.Fatalf("metadata %v %q", props.Metadata, *props.Metadata["color"])
		}
		// Ranges.
		rg, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 7, Count: 3}})
		must(t, err)
		if b := readAll(t, rg.Body); string(b) != "laz" || *rg.ContentRange != "bytes 7-9/13" {
			t.Fatalf("range %q %v", b, *rg.ContentRange)
		}
		rg, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 7, Count: 3}, RangeGetContentMD5: ptr(true)})
		must(t, err)
		readAll(t, rg.Body)
		part := md5.Sum([]byte("laz"))
		if !bytes.Equal(rg.ContentMD5, part[:]) {
			t.Fatalf("range md5 %x", rg.ContentMD5)
		}
		_, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 100, Count: 3}})
		mustCode(t, err, 416, "InvalidRange")
		// Overwrite changes the ETag.
		up2, err := bb.Upload(ctx, body([]byte("second")), nil)
		must(t, err)
		if *up2.ETag == *up.ETag {
			t.Fatal("ETag unchanged by overwrite")
		}
		// Missing blob / container.
		_, err = e.cc.NewBlobClient("nope").GetProperties(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		_, err = e.c.ServiceClient().NewContainerClient("nocontainer").NewBlobClient("x").DownloadStream(ctx, nil)
		mustCode(t, err, 404, "ContainerNotFound")
		// Content-MD5 mismatch leaves the blob untouched.
		bad := md5.Sum([]byte("other"))
		_, err = bb.Upload(ctx, body([]byte("third")), &blockblob.UploadOptions{TransactionalContentMD5: bad[:]})
		mustCode(t, err, 400, "Md5Mismatch")
		got, err = bb.DownloadStream(ctx, nil)
		must(t, err)
		if b := readAll(t, got.Body); string(b) != "second" {
			t.Fatalf("after failed put: %q", b)
		}
	})
}

func lookup(m map[string]*string, k string) string {
	for mk, v := range m {
		if strings.EqualFold(mk, k) && v != nil {
			return *v
		}
	}
	return ""
}

func TestContainers(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c := client(t, tg)
		name := harness.UniqueName("ct")
		_, err := c.CreateContainer(ctx, name, &container.CreateOptions{Metadata: map[string]*string{"k": ptr("v")}, Access: ptr(container.PublicAccessTypeBlob)})
		must(t, err)
		_, err = c.CreateContainer(ctx, name, nil)
		mustCode(t, err, 409, "ContainerAlreadyExists")
		_, err = c.CreateContainer(ctx, "Bad_Name", nil)
		mustCode(t, err, 400, "InvalidResourceName")
		cc := c.ServiceClient().NewContainerClient(name)
		p, err := cc.GetProperties(ctx, nil)
		must(t, err)
		if lookup(p.Metadata, "k") != "v" || p.BlobPublicAccess == nil || *p.BlobPublicAccess != container.PublicAccessTypeBlob {
			t.Fatalf("props %+v", p)
		}
		sm, err := cc.SetMetadata(ctx, &container.SetMetadataOptions{Metadata: map[string]*string{"a": ptr("1")}})
		must(t, err)
		if *sm.ETag == *p.ETag {
			t.Fatal("container ETag unchanged by Set Metadata")
		}
		// List with prefix and paging.
		for i := 0; i < 3; i++ {
			_, err := c.CreateContainer(ctx, name+"x"+string(rune('a'+i)), nil)
			must(t, err)
		}
		pager := c.NewListContainersPager(&azblob.ListContainersOptions{Prefix: ptr(name), MaxResults: ptr(int32(2)), Include: azblob.ListContainersInclude{Metadata: true}})
		var names []string
		for pager.More() {
			page, err := pager.NextPage(ctx)
			must(t, err)
			for _, it := range page.ContainerItems {
				names = append(names, *it.Name)
				if *it.Name == name && lookup(it.Metadata, "a") != "1" {
					t.Fatalf("metadata in listing %v", it.Metadata)
				}
			}
		}
		if strings.Join(names, ",") != strings.Join([]string{name, name + "xa", name + "xb", name + "xc"}, ",") {
			t.Fatalf("listing %v", names)
		}
		_, err = cc.Delete(ctx, nil)
		must(t, err)
		_, err = cc.GetProperties(ctx, nil)
		mustCode(t, err, 404, "ContainerNotFound")
		_, err = cc.Delete(ctx, nil)
		mustCode(t, err, 404, "ContainerNotFound")
	})
}
