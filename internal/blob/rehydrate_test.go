package blob

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// TestRehydrationCompletes: leaving the archive tier keeps the blob
// archived for Azure's stated time (High: one hour, Standard: 15 hours),
// then it has the new tier, changed at the completion time, and its
// content reads; raising the priority of a pending Standard rehydration
// shortens it to an hour from then.
func TestRehydrationCompletes(t *testing.T) {
	s, clk := newService(t)
	ctx := context.Background()
	for _, c := range []struct {
		name, priority string
		takes          time.Duration
	}{{"high", "High", RehydrateHigh}, {"standard", "Standard", RehydrateStandard}, {"raised", "Standard", 2 * time.Hour}} {
		put(t, s, c.name, "payload", Cond{})
		ref := Ref{Account: "acct", Container: "cont", Name: c.name, Snapshot: ""}
		if _, err := s.SetTier(ctx, ref, "Archive", "", Cond{}); err != nil {
			t.Fatal(err)
		}
		start := clk.now()
		if ok, err := s.SetTier(ctx, ref, "Cool", c.priority, Cond{}); err != nil || !ok {
			t.Fatalf("%s: rehydrate %v %v", c.name, ok, err)
		}
		if c.name == "raised" {
			clk.add(time.Hour)
			if ok, err := s.SetTier(ctx, ref, "Cool", "High", Cond{}); err != nil || !ok {
				t.Fatalf("raise priority: %v %v", ok, err)
			}
		}
		_, err := s.SetTier(ctx, ref, "Hot", "", Cond{})
		mustCode(t, err, azerr.BlobBeingRehydrated)
		clk.t = start.Add(c.takes - time.Second)
		b, err := s.GetBlobProperties(ctx, ref, Cond{}, "")
		if err != nil || b.AccessTier != "Archive" || b.RehydrateTo != "Cool" {
			t.Fatalf("%s before the end: %v %q %q", c.name, err, b.AccessTier, b.RehydrateTo)
		}
		clk.t = start.Add(c.takes)
		b, err = s.GetBlob(ctx, ref, Cond{}, "")
		if err != nil || b.AccessTier != "Cool" || b.RehydrateTo != "" || !b.TierChanged.Equal(start.Add(c.takes)) {
			t.Fatalf("%s at the end: %v %q %q %v", c.name, err, b.AccessTier, b.RehydrateTo, b.TierChanged)
		}
		rc := s.Open(ctx, b, 0, b.Size)
		data, _ := io.ReadAll(rc)
		rc.Close()
		if string(data) != "payload" {
			t.Fatalf("%s content %q", c.name, data)
		}
	}
}
