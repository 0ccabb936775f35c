package file

import (
	"testing"
)

// TestWatchTxEvents: the node records an Update wrote become the changes
// CHANGE_NOTIFY reports: a rename within a directory is an old and a new
// name, a move a removal and an addition, a replaced target a removal,
// and a renamed directory is not a deleted one; a renamed or moved file is
// also modified (attributes and creation time) under its new name for
// watchers that do not ask for file names, as Windows reports.
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
			{1, 5, ActionOldName, "a", NotifyFileName, 0}, {1, 5, ActionNewName, "b", NotifyFileName, 0},
			{1, 5, ActionModified, "b", NotifyAttributes | NotifyCreation, NotifyFileName}}},
		{"move", []note{{1, enc(a), nil}, {1, nil, enc(a3)}}, []event{
			{1, 5, ActionRemoved, "a", NotifyFileName, 0}, {1, 6, ActionAdded, "a", NotifyFileName, 0},
			{1, 6, ActionModified, "a", NotifyAttributes | NotifyCreation, NotifyFileName}}},
		{"replace", []note{{1, enc(a), nil}, {1, enc(tgt), enc(a2)}}, []event{
			{1, 5, ActionOldName, "a", NotifyFileName, 0}, {1, 5, ActionNewName, "b", NotifyFileName, 0},
			{1, 5, ActionModified, "b", NotifyAttributes | NotifyCreation, NotifyFileName},
			{1, 5, ActionRemoved, "b", NotifyFileName, 0}}},
		{"directory renamed", []note{{1, enc(d), nil}, {1, nil, enc(d2)}}, []event{
			{1, 5, ActionOldName, "d", NotifyDirName, 0}, {1, 5, ActionNewName, "e", NotifyDirName, 0}}},
		{"directory removed", []note{{1, enc(d), nil}}, []event{
			{1, 12, actionDeleting, "", 0, 0}, {1, 5, ActionRemoved, "d", NotifyDirName, 0}}},
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

// TestWatchRenamedFileFilters: a file renamed (here by REST's Rename
// File) reaches a watcher asking only for attributes as a modification
// under its new name, and one asking for file names (and attributes) as
// the old and the new name alone, as Windows reports (smbtorture
// smb2.notify.mask-change and smb2.notify.rec).
func TestWatchRenamedFileFilters(t *testing.T) {
	svc, ctx := newSvc(t)
	setup(t, svc, ctx)
	sr := ShareRef{Account: "a", Name: "s"}
	d, err := svc.Open(ctx, OpenRequest{Share: sr, Path: "d", Disposition: OpenExist, Directory: true, DesiredAccess: FileReadData, ShareAccess: 7})
	mustNil(t, err)
	attrs := svc.Watch(d.Handle, false, NotifyAttributes, 1000)
	defer attrs.Close()
	names := svc.Watch(d.Handle, false, NotifyFileName|NotifyAttributes|NotifyCreation, 1000)
	defer names.Close()
	_, err = svc.Rename(ctx, RenameRequest{Source: Ref{Account: "a", Share: "s", Path: "d/f"}, Dest: Ref{Account: "a", Share: "s", Path: "d/g"}})
	mustNil(t, err)
	if cs, _, _ := attrs.Take(); len(cs) != 1 || cs[0] != (Change{ActionModified, "g"}) {
		t.Fatalf("attributes watcher: %v, want one modification of g", cs)
	}
	if cs, _, _ := names.Take(); len(cs) != 2 || cs[0] != (Change{ActionOldName, "f"}) || cs[1] != (Change{ActionNewName, "g"}) {
		t.Fatalf("names watcher: %v, want the old and the new name", cs)
	}
}
