package admin

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// TestRetentionFollowsTheClock: a share deleted under a one-day delete
// retention is listed and restorable until the clock has moved a day, and
// gone after.
func TestRetentionFollowsTheClock(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			emu := startTCP(t, e.opts(t))
			ctx := t.Context()
			cred, err := service.NewSharedKeyCredential(emulator.Account, emulator.Key)
			if err != nil {
				t.Fatal(err)
			}
			svc, err := service.NewClientWithSharedKeyCredential(emu.Endpoint(emulator.File), cred, nil)
			if err != nil {
				t.Fatal(err)
			}
			// azfile has no option for the share delete retention: raw XML.
			props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>1</Days></ShareDeleteRetentionPolicy></StorageServiceProperties>`
			req, _ := http.NewRequest("PUT", emu.Endpoint(emulator.File)+"/?restype=service&comp=properties", bytes.NewReader([]byte(props)))
			req.Header.Set("x-ms-version", "2025-11-05")
			key, _ := base64.StdEncoding.DecodeString(emulator.Key)
			if err := sharedkey.Sign(req, emulator.Account, key, false); err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 202 {
				t.Fatalf("Set File Service Properties: %d", resp.StatusCode)
			}
			if _, err := svc.CreateShare(ctx, "kept", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.DeleteShare(ctx, "kept", nil); err != nil {
				t.Fatal(err)
			}
			deleted := func() []*service.Share {
				pg, err := svc.NewListSharesPager(&service.ListSharesOptions{Prefix: to.Ptr("kept"), Include: service.ListSharesInclude{Deleted: true}}).NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return pg.Shares
			}
			ds := deleted()
			if len(ds) != 1 {
				t.Fatalf("deleted shares: %d", len(ds))
			}
			version := *ds[0].Version
			advance(t, emu, "23h")
			if ds := deleted(); len(ds) != 1 || *ds[0].Properties.RemainingRetentionDays != 1 {
				t.Fatalf("23 hours on: %+v", ds)
			}
			advance(t, emu, "2h")
			if ds := deleted(); len(ds) != 0 {
				t.Errorf("a day and an hour on, still listed: %d", len(ds))
			}
			_, err = svc.RestoreShare(ctx, "kept", version, nil)
			if !fileerror.HasCode(err, fileerror.ShareNotFound) {
				t.Errorf("restore after the retention: %v", err)
			}
		})
	}
}
