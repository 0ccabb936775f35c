package server

import (
	"github.com/lazuli-storage/lazuli/internal/blob"
	"net/http"
	"slices"

	"github.com/lazuli-storage/lazuli/internal/blobhttp"
	"github.com/lazuli-storage/lazuli/internal/dfshttp"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// blobHandler is the Blob port's handler: the Blob service, with the dfs
// API in front of it for accounts that have a hierarchical namespace.
func (s *Server) blobHandler(d httpx.Deps, svc *blob.Service) http.Handler {
	b := blobhttp.New(d, svc)
	if !s.hnsOn() {
		return b
	}
	return dfshttp.New(d, svc, b, s.hns)
}

// hnsOn reports whether any account has a hierarchical namespace.
func (s *Server) hnsOn() bool {
	return s.cfg.HierarchicalNamespace || len(s.cfg.HierarchicalNamespaceAccounts) > 0
}

// hns reports whether account has a hierarchical namespace.
func (s *Server) hns(account string) bool {
	return s.cfg.HierarchicalNamespace || slices.Contains(s.cfg.HierarchicalNamespaceAccounts, account)
}

// dfsFront puts dfshttp.RenameDestination before the Blob port's handler
// when some account has a hierarchical namespace.
func (s *Server) dfsFront(h http.Handler) http.Handler {
	if !s.hnsOn() {
		return h
	}
	return dfshttp.RenameDestination(h, s.hns, func(a string) bool {
		_, ok := s.authn.Account(a)
		return ok
	})
}
