package smbfile

import (
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/smb"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// Watch starts a Watcher on the directory h has open (smb.Watchable).
func (h *handle) Watch(tree bool, filter uint32, capacity int, changed func()) smb.Watcher {
	w := h.svc.Watch(h.ref, tree, filter, capacity)
	w.OnChange(changed)
	return watcher{w}
}

type watcher struct{ *file.Watcher }

func (w watcher) Take() ([]wire.NotifyEntry, bool, bool) {
	cs, overflow, deleting := w.Watcher.Take()
	out := make([]wire.NotifyEntry, len(cs))
	for i, c := range cs {
		out[i] = wire.NotifyEntry{Action: c.Action, Name: c.Name}
	}
	return out, overflow, deleting
}
