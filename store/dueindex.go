package store

import (
	"cmp"
	"container/heap"
	"slices"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// DueIndex is an in-memory index of wait deadlines for backends without
// one of their own (memory, JSON files): a min-heap with positions by run
// id, so setting, removing and listing due runs never scans every run.
// It is not safe for concurrent use; the backend's lock guards it.
type DueIndex struct {
	items []DueRun
	pos   map[string]int
}

// Set records or moves the deadline of a run.
func (d *DueIndex) Set(runID string, until durable.Time) {
	if d.pos == nil {
		d.pos = map[string]int{}
	}
	if i, ok := d.pos[runID]; ok {
		d.items[i].Until = until
		heap.Fix((*dueHeap)(d), i)
		return
	}
	heap.Push((*dueHeap)(d), DueRun{RunID: runID, Until: until})
}

// Remove forgets a run's deadline, if any.
func (d *DueIndex) Remove(runID string) {
	if i, ok := d.pos[runID]; ok {
		heap.Remove((*dueHeap)(d), i)
	}
}

// Update keeps the index in step with a committed run state.
func (d *DueIndex) Update(r *durable.RunState) {
	if until, ok := Deadline(r); ok {
		d.Set(r.RunID, until)
	} else {
		d.Remove(r.RunID)
	}
}

// Next returns the earliest deadline, or the zero Time.
func (d *DueIndex) Next() durable.Time {
	if len(d.items) == 0 {
		return durable.Time{}
	}
	return d.items[0].Until
}

// ListDue returns up to limit runs due at now, earliest first, walking
// only the part of the heap that is due.
func (d *DueIndex) ListDue(now time.Time, limit int) []DueRun {
	var out []DueRun
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(d.items) || d.items[i].Until.After(now) {
			continue
		}
		out = append(out, d.items[i])
		stack = append(stack, 2*i+1, 2*i+2)
	}
	slices.SortFunc(out, func(a, b DueRun) int {
		if c := a.Until.Compare(b.Until.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.RunID, b.RunID)
	})
	return out[:min(len(out), limit)]
}

// dueHeap adapts DueIndex to container/heap.
type dueHeap DueIndex

func (h *dueHeap) Len() int           { return len(h.items) }
func (h *dueHeap) Less(i, j int) bool { return h.items[i].Until.Before(h.items[j].Until.Time) }
func (h *dueHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i].RunID] = i
	h.pos[h.items[j].RunID] = j
}
func (h *dueHeap) Push(x any) {
	it := x.(DueRun)
	h.pos[it.RunID] = len(h.items)
	h.items = append(h.items, it)
}
func (h *dueHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.pos, it.RunID)
	return it
}
