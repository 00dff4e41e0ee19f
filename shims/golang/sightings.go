package main

// sightings: which pending events a stream's consumer has received, by Request id, so a
// WaitFor can tell the host whether the link reached the consumer while it waits
// (SPEC.md §6, host.waitFor pendingEventSeen; stream.pending-event).

import (
	"sync"
	"time"
)

// sightingWait is how long a stream's WaitFor waits for the consumer to receive the pending
// event of its Request before telling the host it did not.
const sightingWait = time.Second

type sightings struct {
	mu   sync.Mutex
	seen map[string]chan struct{}
}

func newSightings() *sightings { return &sightings{seen: map[string]chan struct{}{}} }

func (s *sightings) flag(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[id] == nil {
		s.seen[id] = make(chan struct{})
	}
	return s.seen[id]
}

// saw notes that the consumer received the pending event of Request id.
func (s *sightings) saw(id string) {
	flag := s.flag(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-flag:
	default:
		close(flag)
	}
}

// waitSeen reports whether the consumer has received, or receives within sightingWait,
// the pending event of Request id.
func (s *sightings) waitSeen(id string) bool {
	select {
	case <-s.flag(id):
		return true
	case <-time.After(sightingWait):
		return false
	}
}
