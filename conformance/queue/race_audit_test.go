package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/lazuli-storage/lazuli/conformance/harness"
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

func isMessageNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == 404 && re.ErrorCode == "MessageNotFound"
}

// TestRaceAuditUpdateVsDeleteMessage: Update Message and Delete Message
// racing with one pop receipt: exactly one wins, every other gets 404
// MessageNotFound, and the queue agrees with the winner.
func TestRaceAuditUpdateVsDeleteMessage(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		qc, _ := MustQueue(t, tg, "udrace")
		for round := 0; round < 4; round++ {
			_, err := qc.EnqueueMessage(ctx, fmt.Sprint("m", round), nil)
			MustNoErr(t, err)
			got, err := qc.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: ptr(int32(60))})
			MustNoErr(t, err)
			if len(got.Messages) != 1 {
				t.Fatalf("round %d: %d messages", round, len(got.Messages))
			}
			m := got.Messages[0]
			const n = 8
			g := newStartGate(n)
			var mu sync.Mutex
			wins, notFound := 0, 0
			deleted := false
			var newReceipt string
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					g.wait()
					var err error
					var receipt string
					if i%2 == 0 {
						_, err = qc.DeleteMessage(context.Background(), *m.MessageID, *m.PopReceipt, nil)
					} else {
						var r azqueue.UpdateMessageResponse
						r, err = qc.UpdateMessage(context.Background(), *m.MessageID, *m.PopReceipt, fmt.Sprint("u", i),
							&azqueue.UpdateMessageOptions{VisibilityTimeout: ptr(int32(60))})
						if err == nil {
							receipt = *r.PopReceipt
						}
					}
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						wins++
						deleted, newReceipt = i%2 == 0, receipt
					case isMessageNotFound(err):
						notFound++
					default:
						t.Errorf("caller %d: %v", i, err)
					}
				}()
			}
			g.open()
			wg.Wait()
			if wins != 1 || notFound != n-1 {
				t.Fatalf("round %d: %d won, %d MessageNotFound", round, wins, notFound)
			}
			if deleted {
				p, err := qc.GetProperties(ctx, nil)
				MustNoErr(t, err)
				if *p.ApproximateMessagesCount != 0 {
					t.Fatalf("round %d: delete won, %d messages left", round, *p.ApproximateMessagesCount)
				}
				continue
			}
			// The update's new receipt is the only one that works now.
			_, err = qc.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)
			MustCode(t, err, 404, "MessageNotFound")
			_, err = qc.DeleteMessage(ctx, *m.MessageID, newReceipt, nil)
			MustNoErr(t, err)
		}
	})
}

// TestRaceAuditConsumersShareNothing: consumers dequeuing together while
// producers enqueue never receive one message twice within its
// visibility timeout, and each receipt deletes exactly its message.
func TestRaceAuditConsumersShareNothing(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		qc, _ := MustQueue(t, tg, "share")
		const producers, each, consumers = 3, 20, 4
		g := newStartGate(producers + consumers)
		var mu sync.Mutex
		seen := map[string]int{}
		var produced sync.WaitGroup
		produced.Add(producers)
		var wg sync.WaitGroup
		for p := 0; p < producers; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer produced.Done()
				g.wait()
				for i := 0; i < each; i++ {
					if _, err := qc.EnqueueMessage(context.Background(), fmt.Sprintf("%d-%d", p, i), nil); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { produced.Wait(); close(done) }()
		for c := 0; c < consumers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				for {
					r, err := qc.DequeueMessages(context.Background(), &azqueue.DequeueMessagesOptions{NumberOfMessages: ptr(int32(5)), VisibilityTimeout: ptr(int32(300))})
					if err != nil {
						t.Error(err)
						return
					}
					for _, m := range r.Messages {
						mu.Lock()
						seen[*m.MessageText]++
						mu.Unlock()
						if _, err := qc.DeleteMessage(context.Background(), *m.MessageID, *m.PopReceipt, nil); err != nil {
							t.Errorf("delete with the dequeue's own receipt: %v", err)
						}
					}
					if len(r.Messages) == 0 {
						select {
						case <-done:
							mu.Lock()
							n := len(seen)
							mu.Unlock()
							if n == producers*each {
								return
							}
						default:
						}
						time.Sleep(time.Millisecond)
					}
				}
			}()
		}
		g.open()
		wg.Wait()
		if len(seen) != producers*each {
			t.Fatalf("received %d distinct messages, want %d", len(seen), producers*each)
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("message %s received %d times", k, n)
			}
		}
	})
}
