package store

import (
	"container/heap"
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
// run id). The heap is ordered that way too, so a best-first walk from
// its root pops them in order: it visits the runs it returns and their
// children, never every due run when many are due (at one instant, too)
// and limit is small.
func (d *DueIndex) ListDue(now time.Time, limit int) []DueRun {
	if limit <= 0 || len(d.items) == 0 || d.items[0].Until.After(now) {
		return nil
	}
	var out []DueRun
	frontier := &dueFrontier{items: d.items, idx: []int{0}}
	for frontier.Len() > 0 && len(out) < limit {
		i := heap.Pop(frontier).(int)
		out = append(out, d.items[i])
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(d.items) && !d.items[c].Until.After(now) {
				heap.Push(frontier, c)
			}
		}
	}
	return out
}

// dueBefore orders due runs by deadline, then run id: the order ListDue
// returns, total so that no tie is left for the walk to settle.
func dueBefore(a, b *DueRun) bool {
	if c := a.Until.Compare(b.Until.Time); c != 0 {
		return c < 0
	}
	return a.RunID < b.RunID
}

// dueFrontier is ListDue's min-heap of positions in the due heap, in
// dueBefore order.
type dueFrontier struct {
	items []DueRun
	idx   []int
}

func (f *dueFrontier) Len() int { return len(f.idx) }
func (f *dueFrontier) Less(i, j int) bool {
	return dueBefore(&f.items[f.idx[i]], &f.items[f.idx[j]])
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
func (h *dueHeap) Less(i, j int) bool { return dueBefore(&h.items[i], &h.items[j]) }
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
