package table

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// sasClient returns a table client that authenticates with a service SAS
// signed for the given values.
func sasClient(t *testing.T, tg *harness.Target, table string, v aztables.SASSignatureValues) *aztables.Client {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(tg.Account, tg.Key)
	if err != nil {
		t.Fatal(err)
	}
	v.TableName = table
	if v.ExpiryTime.IsZero() {
		v.ExpiryTime = time.Now().Add(time.Hour).UTC()
	}
	qs, err := v.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	// aztables v1.4.1 signs the key range but leaves spk/srk/epk/erk out
	// of the query string; add them as Azure expects.
	for _, kv := range [][2]string{{"spk", v.StartPartitionKey}, {"srk", v.StartRowKey}, {"epk", v.EndPartitionKey}, {"erk", v.EndRowKey}} {
		if kv[1] != "" {
			qs += "&" + kv[0] + "=" + url.QueryEscape(kv[1])
		}
	}
	c, err := aztables.NewClientWithNoCredential(tg.TableURL+"/"+table+"?"+qs, &aztables.ClientOptions{ClientOptions: tg.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every entity operation, and every operation inside a batch, is checked
// against the service SAS permissions (r query, a add, u update, d delete;
// upserts need a and u), its key range and stored access policies.
func TestServiceSASPerOperation(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		admin, name := MustTable(t, tg, "sas")
		MustAdd(t, admin, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": "v"})
		e := func(rk string) []byte { return entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": rk}) }

		ro := sasClient(t, tg, name, aztables.SASSignatureValues{Permissions: "r"})
		if _, err := ro.GetEntity(ctx, "p", "r", nil); err != nil {
			t.Fatalf("read with r: %v", err)
		}
		if got, _ := listAll(t, ro, nil); len(got) != 1 {
			t.Fatalf("query with r: %d", len(got))
		}
		_, err := ro.AddEntity(ctx, e("x"), nil)
		WantCode(t, err, 403, "AuthorizationPermissionMismatch")

		add := sasClient(t, tg, name, aztables.SASSignatureValues{Permissions: "a"})
		if _, err := add.AddEntity(ctx, e("a1"), nil); err != nil {
			t.Fatalf("add with a: %v", err)
		}
		_, err = add.UpsertEntity(ctx, e("a2"), nil)
		WantCode(t, err, 403, "AuthorizationPermissionMismatch")
		_, err = add.DeleteEntity(ctx, "p", "a1", nil)
		WantCode(t, err, 403, "AuthorizationPermissionMismatch")
		// A batch holding an upsert fails whole under an add-only SAS.
		_, err = add.SubmitTransaction(ctx, []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: e("b1")},
			{ActionType: aztables.TransactionTypeInsertMerge, Entity: e("b2")},
		}, nil)
		if err == nil {
			t.Fatal("batch with an upsert succeeded under an add-only SAS")
		}
		_, err = admin.GetEntity(ctx, "p", "b1", nil)
		WantCode(t, err, 404, "ResourceNotFound")

		au := sasClient(t, tg, name, aztables.SASSignatureValues{Permissions: "au"})
		if _, err := au.UpsertEntity(ctx, e("a2"), nil); err != nil {
			t.Fatalf("upsert with au: %v", err)
		}
		if _, err := au.SubmitTransaction(ctx, []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: e("b1")},
			{ActionType: aztables.TransactionTypeInsertMerge, Entity: e("b2")},
		}, nil); err != nil {
			t.Fatalf("batch with au: %v", err)
		}

		// Key range: only partition p rows up to "m".
		rng := sasClient(t, tg, name, aztables.SASSignatureValues{Permissions: "ra", StartPartitionKey: "p", EndPartitionKey: "p", EndRowKey: "m"})
		if _, err := rng.AddEntity(ctx, e("c"), nil); err != nil {
			t.Fatalf("add inside range: %v", err)
		}
		_, err = rng.AddEntity(ctx, e("z"), nil)
		if StatusCode(err) != 403 {
			t.Fatalf("add outside range: %v", err)
		}

		// A stored access policy supplies the permissions.
		start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
		expiry := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		if _, err := admin.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
			{ID: ptr("readers"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: ptr("r")}},
		}}); err != nil {
			t.Fatal(err)
		}
		polURL := func() string {
			cred, _ := aztables.NewSharedKeyCredential(tg.Account, tg.Key)
			qs, err := aztables.SASSignatureValues{TableName: name, Identifier: "readers"}.Sign(cred)
			if err != nil {
				t.Fatal(err)
			}
			return tg.TableURL + "/" + name + "?" + qs
		}()
		pc, err := aztables.NewClientWithNoCredential(polURL, &aztables.ClientOptions{ClientOptions: tg.ClientOptions()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pc.GetEntity(ctx, "p", "r", nil); err != nil {
			t.Fatalf("read with policy: %v", err)
		}
		_, err = pc.AddEntity(ctx, e("pp"), nil)
		if StatusCode(err) != 403 {
			t.Fatalf("add with read policy: %v", err)
		}
		u, _ := url.Parse(polURL)
		if !strings.Contains(u.RawQuery, "si=readers") {
			t.Fatalf("policy SAS %s", u.RawQuery)
		}
		// A service SAS cannot create or delete tables.
		svcSAS, err := aztables.NewServiceClientWithNoCredential(tg.TableURL+"/?"+u.RawQuery, &aztables.ClientOptions{ClientOptions: tg.ClientOptions()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = svcSAS.CreateTable(ctx, harness.UniqueTable("sasnew"), nil)
		if StatusCode(err) != 403 {
			t.Fatalf("create table with a service SAS: %v", err)
		}
	})
}
