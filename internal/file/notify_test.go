package file

import (
	"testing"
)

// TestWatchTxEvents: the node records an Update wrote become the changes
// CHANGE_NOTIFY reports: a rename within a directory is an old and a new
// name, a move a removal and an addition, a replaced target a removal,
// and a renamed directory is not a deleted one.
func TestWatchTxEvents(t *testing.T) {
	h := &hub{shares: map[uint64]map[*Watcher]struct{}{1: {}}, trees: map[uint64]int{}}
	enc := func(n *Node) []byte { return encodeNode(n) }
	a := &Node{ID: 10, Parent: 5, Name: "a"}
	a2 := &Node{ID: 10, Parent: 5, Name: "b"}
	a3 := &Node{ID: 10, Parent: 6, Name: "a"}
	tgt := &Node{ID: 11, Parent: 5, Name: "b"}
	d := &Node{ID: 12, Parent: 5, Name: "d", Dir: true}
	d2 := &Node{ID: 12, Parent: 5, Name: "e", Dir: true}
	for _, tc := range []struct {
		name  string
		notes []note
		want  []event
	}{
		{"rename", []note{{1, enc(a), nil}, {1, nil, enc(a2)}}, []event{
			{1, 5, ActionOldName, "a", NotifyFileName}, {1, 5, ActionNewName, "b", NotifyFileName}}},
		{"move", []note{{1, enc(a), nil}, {1, nil, enc(a3)}}, []event{
			{1, 5, ActionRemoved, "a", NotifyFileName}, {1, 6, ActionAdded, "a", NotifyFileName}}},
		{"replace", []note{{1, enc(a), nil}, {1, enc(tgt), enc(a2)}}, []event{
			{1, 5, ActionOldName, "a", NotifyFileName}, {1, 5, ActionNewName, "b", NotifyFileName},
			{1, 5, ActionRemoved, "b", NotifyFileName}}},
		{"directory renamed", []note{{1, enc(d), nil}, {1, nil, enc(d2)}}, []event{
			{1, 5, ActionOldName, "d", NotifyDirName}, {1, 5, ActionNewName, "e", NotifyDirName}}},
		{"directory removed", []note{{1, enc(d), nil}}, []event{
			{1, 12, actionDeleting, "", 0}, {1, 5, ActionRemoved, "d", NotifyDirName}}},
	} {
		wt := &watchTx{h: h, notes: tc.notes}
		got := wt.events()
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// TestWatchDirectoryAlreadyDeletePending: a Watcher started on a directory
// another open already set pending deletion reports deleting at once (a
// CHANGE_NOTIFY that reached the server after the delete then answers
// DELETE_PENDING instead of waiting for events that never come).
func TestWatchDirectoryAlreadyDeletePending(t *testing.T) {
	svc, ctx := newSvc(t)
	setup(t, svc, ctx)
	sr := ShareRef{Account: "a", Name: "s"}
	_, err := svc.Create(ctx, CreateRequest{Ref: Ref{Account: "a", Share: "s", Path: "e"}, Dir: true})
	mustNil(t, err)
	all := FileReadData | Delete
	a, err := svc.Open(ctx, OpenRequest{Share: sr, Path: "e", Disposition: OpenExist, Directory: true, DesiredAccess: all, ShareAccess: 7})
	mustNil(t, err)
	live := svc.Watch(a.Handle, false, 1, 1000)
	defer live.Close()
	if _, _, deleting := live.Take(); deleting {
		t.Fatal("a Watcher on a live directory starts deleting")
	}
	b, err := svc.Open(ctx, OpenRequest{Share: sr, Path: "e", Disposition: OpenExist, Directory: true, DesiredAccess: all, ShareAccess: 7})
	mustNil(t, err)
	_, err = svc.SetDeletePending(ctx, b.Handle, true)
	mustNil(t, err)
	_, err = svc.Close(ctx, b.Handle)
	mustNil(t, err)
	w := svc.Watch(a.Handle, false, 1, 1000)
	defer w.Close()
	select {
	case <-w.Ready():
	default:
		t.Fatal("a Watcher on a directory pending deletion is not ready")
	}
	if _, _, deleting := w.Take(); !deleting {
		t.Fatal("a Watcher on a directory pending deletion does not report it")
	}
}
