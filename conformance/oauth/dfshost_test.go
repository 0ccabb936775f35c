package oauth_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"

	"github.com/lazuli-storage/lazuli/emulator"
)

// dfsURL is the host-style Data Lake endpoint, as Azure's
// <account>.dfs.core.windows.net: the host devstoreaccount1.dfs.localhost
// reaches the Blob port, where lazuli serves the dfs API.
func (s *server) dfsURL() string {
	_, port, _ := net.SplitHostPort(s.emu.Addr(emulator.Blob))
	return "https://devstoreaccount1.dfs.localhost:" + port + "/"
}

// The dfs API answers host-style URLs (<account>.dfs.<suffix>): the Data
// Lake SDK pointed at one creates a filesystem, writes, renames, lists and
// reads, with Shared Key signatures over the host-style resource.
func TestDataLakeHostStyleURL(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	ctx := context.Background()
	cred, err := azdatalake.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	fs, err := filesystem.NewClientWithSharedKeyCredential(s.dfsURL()+"hoststyle", cred, &filesystem.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = fs.Create(ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("dir").Create(ctx, nil)
	must(t, err)
	f := fs.NewFileClient("dir/a.txt")
	_, err = f.Create(ctx, nil)
	must(t, err)
	must(t, f.UploadBuffer(ctx, []byte("host-style"), nil))
	_, err = f.Rename(ctx, "dir/b.txt", nil)
	must(t, err)
	page, err := fs.NewListPathsPager(true, nil).NextPage(ctx)
	must(t, err)
	if len(page.Paths) != 2 || deref(page.Paths[1].Name) != "dir/b.txt" {
		t.Fatalf("paths %+v", page.Paths)
	}
	resp, err := fs.NewFileClient("dir/b.txt").DownloadStream(ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "host-style" {
		t.Fatalf("read %q", got)
	}
	acl, err := fs.NewFileClient("dir/b.txt").GetAccessControl(ctx, nil)
	must(t, err)
	if deref(acl.Owner) != "$superuser" {
		t.Fatalf("owner %s", deref(acl.Owner))
	}

	// On the wire: dfs requests to the host-style URL, with no account in
	// the path, act on the account the host names.
	do := func(method, path string, host ...string) (int, string) {
		req, err := http.NewRequest(method, s.dfsURL()+path, nil)
		must(t, err)
		if host != nil {
			// Azure's own host name, sent to the listener's address.
			req.URL.Host, req.Host = s.emu.Addr(emulator.Blob), host[0]
		}
		req.Header.Set("X-Ms-Version", "2023-11-03")
		req.Header.Set("Authorization", "Bearer "+principal(aliceOID, nil, []string{"Storage Blob Data Owner"}).jwt())
		resp, err := s.transport.Do(req)
		must(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := do(http.MethodPut, "hoststyle/dir/wire.txt?resource=file"); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := do(http.MethodGet, "hoststyle?resource=filesystem&recursive=true"); code != http.StatusOK || !strings.Contains(body, `"dir/wire.txt"`) {
		t.Fatalf("list: %d %s", code, body)
	}
	if code, body := do(http.MethodGet, "hoststyle?resource=filesystem&recursive=true", "devstoreaccount1.dfs.core.windows.net"); code != http.StatusOK || !strings.Contains(body, `"dir/wire.txt"`) {
		t.Fatalf("list with Host %s: %d %s", "devstoreaccount1.dfs.core.windows.net", code, body)
	}
}
