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

// ListDue returns up to limit runs due at now, earliest first (ties by
// run id). It walks the heap best-first from its root, so it visits the
// runs it returns, those tied with the last of them, and their children:
// never every due run when many are due and limit is small.
func (d *DueIndex) ListDue(now time.Time, limit int) []DueRun {
	if limit <= 0 || len(d.items) == 0 || d.items[0].Until.After(now) {
		return nil
	}
	var out []DueRun
	frontier := &dueFrontier{items: d.items, idx: []int{0}}
	for frontier.Len() > 0 {
		it := d.items[heap.Pop(frontier).(int)]
		// Popped in deadline order: once limit runs are out, only ties
		// with the last can still belong (the run id breaks them).
		if len(out) >= limit && it.Until.After(out[len(out)-1].Until.Time) {
			break
		}
		out = append(out, it)
		i := d.pos[it.RunID]
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(d.items) && !d.items[c].Until.After(now) {
				heap.Push(frontier, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b DueRun) int {
		if c := a.Until.Compare(b.Until.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.RunID, b.RunID)
	})
	return out[:min(len(out), limit)]
}

// dueFrontier is ListDue's min-heap of positions in the due heap, by
// deadline.
type dueFrontier struct {
	items []DueRun
	idx   []int
}

func (f *dueFrontier) Len() int { return len(f.idx) }
func (f *dueFrontier) Less(i, j int) bool {
	return f.items[f.idx[i]].Until.Before(f.items[f.idx[j]].Until.Time)
}
func (f *dueFrontier) Swap(i, j int) { f.idx[i], f.idx[j] = f.idx[j], f.idx[i] }
func (f *dueFrontier) Push(x any)    { f.idx = append(f.idx, x.(int)) }
func (f *dueFrontier) Pop() any {
	x := f.idx[len(f.idx)-1]
	f.idx = f.idx[:len(f.idx)-1]
	return x
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
