package table

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestAccountSASPermissionTable pins the account SAS letter each Table
// operation needs, as Azure's account SAS table gives them (every resource
// type granted): service properties and stats r, setting them w; Query
// Tables l; Create Table w or c; Delete Table d; Query Entities and Get
// Entity r; Insert Entity a; Update and Merge Entity u; Insert Or Merge
// and Insert Or Replace a and u; Delete Entity d. For each, a SAS with
// every other letter is 403 AuthorizationPermissionMismatch.
func TestAccountSASPermissionTable(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		cred, err := aztables.NewSharedKeyCredential(tg.Account, tg.Key)
		if err != nil {
			t.Fatal(err)
		}
		const letters = "rwdlacup"
		client := func(perms string) *aztables.ServiceClient {
			t.Helper()
			p := aztables.AccountSASPermissions{}
			for _, c := range perms {
				switch c {
				case 'r':
					p.Read = true
				case 'w':
					p.Write = true
				case 'd':
					p.Delete = true
				case 'l':
					p.List = true
				case 'a':
					p.Add = true
				case 'c':
					p.Create = true
				case 'u':
					p.Update = true
				case 'p':
					p.Process = true
				}
			}
			qp, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
				Permissions: p.String(), Services: "t",
				ResourceTypes: aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true}.String()}.Sign(cred)
			if err != nil {
				t.Fatal(err)
			}
			c, err := aztables.NewServiceClientWithNoCredential(tg.TableURL+"/?"+qp.Encode(), &aztables.ClientOptions{ClientOptions: tg.ClientOptions()})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		owner, name := MustTable(t, tg, "acctperm")
		MustAdd(t, owner, map[string]any{"PartitionKey": "p", "RowKey": "r"})
		n := 0
		ent := func() []byte {
			n++
			return entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "e" + string(rune('a'+n%26)) + time.Now().Format("150405.000000000")})
		}
		existing := entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": "x"})
		cases := []struct {
			op      string
			letters string // any one of them allows the operation
			all     bool   // all of letters are needed
			run     func(c *aztables.ServiceClient) error
		}{
			{"GetTableServiceProperties", "r", false, func(c *aztables.ServiceClient) error { _, err := c.GetProperties(ctx, nil); return err }},
			{"SetTableServiceProperties", "w", false, func(c *aztables.ServiceClient) error {
				_, err := c.SetProperties(ctx, aztables.ServiceProperties{}, nil)
				return err
			}},
			{"QueryTables", "l", false, func(c *aztables.ServiceClient) error { _, err := c.NewListTablesPager(nil).NextPage(ctx); return err }},
			{"CreateTable", "wc", false, func(c *aztables.ServiceClient) error {
				_, err := c.CreateTable(ctx, harness.UniqueTable("made"), nil)
				return err
			}},
			{"QueryEntities", "r", false, func(c *aztables.ServiceClient) error {
				_, err := c.NewClient(name).NewListEntitiesPager(nil).NextPage(ctx)
				return err
			}},
			{"GetEntity", "r", false, func(c *aztables.ServiceClient) error {
				_, err := c.NewClient(name).GetEntity(ctx, "p", "r", nil)
				return err
			}},
			{"InsertEntity", "a", false, func(c *aztables.ServiceClient) error {
				_, err := c.NewClient(name).AddEntity(ctx, ent(), nil)
				return err
			}},
			{"UpdateEntity", "u", false, func(c *aztables.ServiceClient) error {
				_, err := c.NewClient(name).UpdateEntity(ctx, existing, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace})
				return err
			}},
			{"MergeEntity", "u", false, func(c *aztables.ServiceClient) error {
				_, err := c.NewClient(name).UpdateEntity(ctx, existing, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
				return err
			}},
			{"InsertOrReplaceEntity", "au", true, func(c *aztables.ServiceClient) error {
				_, err := c.NewClient(name).UpsertEntity(ctx, existing, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
				return err
			}},
			{"DeleteEntity", "d", false, func(c *aztables.ServiceClient) error {
				e := ent()
				if _, err := owner.AddEntity(ctx, e, nil); err != nil {
					return err
				}
				var m map[string]any
				_ = json.Unmarshal(e, &m)
				_, err := c.NewClient(name).DeleteEntity(ctx, "p", m["RowKey"].(string), nil)
				return err
			}},
			{"DeleteTable", "d", false, func(c *aztables.ServiceClient) error {
				tn := harness.UniqueTable("gone")
				if _, err := tg.Table(t).CreateTable(ctx, tn, nil); err != nil {
					return err
				}
				_, err := c.DeleteTable(ctx, tn, nil)
				return err
			}},
		}
		for _, tc := range cases {
			allowing := []string{}
			if tc.all {
				allowing = append(allowing, tc.letters)
			} else {
				for _, l := range tc.letters {
					allowing = append(allowing, string(l))
				}
			}
			for _, l := range allowing {
				if err := tc.run(client(l)); err != nil {
					t.Errorf("%s with %q: %v", tc.op, l, err)
				}
			}
			others := ""
			for _, c := range letters {
				if !containsRune(tc.letters, c) {
					others += string(c)
				}
			}
			if err := tc.run(client(others)); StatusCode(err) != 403 || ErrorCode(err) != "AuthorizationPermissionMismatch" {
				t.Errorf("%s with %q: %v, want 403 AuthorizationPermissionMismatch", tc.op, others, err)
			}
			if tc.all {
				for _, l := range tc.letters {
					if err := tc.run(client(others + string(l))); StatusCode(err) != 403 {
						t.Errorf("%s without all of %q: %v, want 403", tc.op, tc.letters, err)
					}
				}
			}
		}
	})
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}
