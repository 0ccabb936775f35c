package table

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// startGate releases n goroutines at once so that their requests overlap.
type startGate struct {
	ready sync.WaitGroup
	start chan struct{}
}

func newStartGate(n int) *startGate {
	g := &startGate{start: make(chan struct{})}
	g.ready.Add(n)
	return g
}

func (g *startGate) wait() { g.ready.Done(); <-g.start }
func (g *startGate) open() { g.ready.Wait(); close(g.start) }

// insertRaw sends Insert Entity (echoing the entity, so success is 201)
// and returns the status, the error code and the ETag; it is safe to call
// from any goroutine.
func insertRaw(tg *harness.Target, table, body string) (int, string, string, error) {
	req, err := http.NewRequest("POST", tg.TableURL+"/"+table, strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	req.Header.Set("Content-Type", "application/json")
	if err := sharedkey.Sign(req, tg.Account, tg.KeyBytes(), true); err != nil {
		return 0, "", "", err
	}
	resp, err := tg.HTTP.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", "", err
	}
	code := ""
	if resp.StatusCode >= 400 {
		var m struct {
			Err struct {
				Code string `json:"code"`
			} `json:"odata.error"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return 0, "", "", fmt.Errorf("error body %q: %v", b, err)
		}
		code = m.Err.Code
	}
	return resp.StatusCode, code, resp.Header.Get("ETag"), nil
}

// TestRaceAuditInsertSameKey: of N Insert Entity requests for one key
// exactly one gets 201 and the rest 409 EntityAlreadyExists; the stored
// entity is the winner's.
func TestRaceAuditInsertSameKey(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		c, name := MustTable(t, tg, "rins")
		const n = 12
		for round := 0; round < 3; round++ {
			rk := fmt.Sprint("r", round)
			g := newStartGate(n)
			var mu sync.Mutex
			created, conflicts, winner := 0, 0, -1
			winETag := ""
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := fmt.Sprintf(`{"PartitionKey":"p","RowKey":%q,"W":%d}`, rk, i)
					g.wait()
					status, code, etag, err := insertRaw(tg, name, body)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err != nil:
						t.Error(err)
					case status == 201:
						created++
						winner, winETag = i, etag
					case status == 409 && code == "EntityAlreadyExists":
						conflicts++
					default:
						t.Errorf("insert %d: %d %s", i, status, code)
					}
				}()
			}
			g.open()
			wg.Wait()
			if created != 1 || conflicts != n-1 {
				t.Fatalf("round %d: %d created, %d conflicts", round, created, conflicts)
			}
			m, etag := MustGet(t, c, "p", rk)
			if m["W"] != float64(winner) || string(etag) != winETag {
				t.Fatalf("round %d: stored W=%v %s, winner %d %s", round, m["W"], etag, winner, winETag)
			}
		}
	})
}

// TestRaceAuditBatchVsDeleteTable: a batch racing Delete Table commits
// whole before the delete or fails with TableNotFound; a table created
// again under the name holds none of the old rows.
func TestRaceAuditBatchVsDeleteTable(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Table(t)
		for round := 0; round < 4; round++ {
			c, name := MustTable(t, tg, "rbdel")
			var actions []aztables.TransactionAction
			for r := 0; r < 20; r++ {
				actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
					Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%02d", r)})})
			}
			g := newStartGate(2)
			var batchErr, delErr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				g.wait()
				_, batchErr = c.SubmitTransaction(ctx, actions, nil)
			}()
			go func() {
				defer wg.Done()
				g.wait()
				_, delErr = svc.DeleteTable(ctx, name, nil)
			}()
			g.open()
			wg.Wait()
			if delErr != nil {
				t.Fatal(delErr)
			}
			// A refused changeset is a 202 whose one sub-response carries
			// the failure; the SDK reports it with the body in the error.
			if batchErr != nil && !(strings.Contains(batchErr.Error(), "HTTP/1.1 404 Not Found") && strings.Contains(batchErr.Error(), `"code":"TableNotFound"`)) {
				t.Fatalf("round %d: batch %v", round, batchErr)
			}
			_, err := c.GetEntity(ctx, "p", "00", nil)
			if StatusCode(err) != 404 || ErrorCode(err) != "TableNotFound" {
				t.Fatalf("round %d: entity of the deleted table: %v", round, err)
			}
			if _, err := c.CreateTable(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if all, _ := listAll(t, c, nil); len(all) != 0 {
				t.Fatalf("round %d: re-created table holds %d entities", round, len(all))
			}
		}
	})
}
