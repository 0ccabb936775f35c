package server

import (
	"time"

	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/queue"
	"github.com/lazuli-storage/lazuli/internal/table"
)

// Services are the domain services of one server, each built once over
// its engine. Every protocol layer of a kind shares the one service: the
// Blob port and the File port's copy sources read through one
// blob.Service, File REST and SMB open handles through one file.Service,
// so the rules a service keeps in memory (its ETag clock never handing
// out a stamp twice) hold for the whole process.
type Services struct {
	Blob  *blob.Service
	Queue *queue.Service
	Table *table.Service
	File  *file.Service
}

// buildServices builds the four services over the engine with the
// services' clock, the test clock's floor and the MD5 lanes, and hands
// their background work to the server.
func (s *Server) buildServices(now func() time.Time) {
	floor := s.floor()
	s.services = Services{
		Blob:  blob.New(s.engine, now, guid.NewString),
		Queue: queue.New(s.engine, now),
		Table: table.New(s.engine, table.Options{Now: now, Floor: floor}),
		File:  file.New(s.engine, now, guid.NewString),
	}
	s.services.Blob.UseMD5Lanes(s.md5)
	s.services.Blob.UseVersioning(s.cfg.blobVersioning())
	s.services.Blob.UseContainerRetention(s.cfg.containerRetention())
	s.services.Blob.UseHierarchicalNamespace(s.hns)
	s.services.File.UseMD5Lanes(s.md5)
	if floor != nil {
		s.services.Blob.UseFloor(floor)
		s.services.File.UseFloor(floor)
	}
	// Purges of deleted queues, tables and shares, including those an
	// earlier process left unfinished.
	// Purges of soft-deleted blobs and containers whose retention ended.
	s.workers = append(s.workers, s.services.Blob.Run, s.services.Queue.Run, s.services.Table.Run, s.services.File.Run)
}

// Services returns the domain services the server built.
func (s *Server) Services() Services { return s.services }
