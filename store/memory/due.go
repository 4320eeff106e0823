package memory

import (
	"container/heap"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// dueIndex is a min-heap of wait deadlines with positions by run id, so
// due runs are found without scanning every run.
type dueIndex struct {
	items []store.DueRun
	pos   map[string]int
}

func (d *dueIndex) Len() int { return len(d.items) }
func (d *dueIndex) Less(i, j int) bool {
	return d.items[i].Until.Before(d.items[j].Until.Time)
}
func (d *dueIndex) Swap(i, j int) {
	d.items[i], d.items[j] = d.items[j], d.items[i]
	d.pos[d.items[i].RunID] = i
	d.pos[d.items[j].RunID] = j
}
func (d *dueIndex) Push(x any) {
	it := x.(store.DueRun)
	d.pos[it.RunID] = len(d.items)
	d.items = append(d.items, it)
}
func (d *dueIndex) Pop() any {
	it := d.items[len(d.items)-1]
	d.items = d.items[:len(d.items)-1]
	delete(d.pos, it.RunID)
	return it
}

func (d *dueIndex) set(runID string, until durable.Time) {
	if i, ok := d.pos[runID]; ok {
		d.items[i].Until = until
		heap.Fix(d, i)
		return
	}
	heap.Push(d, store.DueRun{RunID: runID, Until: until})
}

func (d *dueIndex) remove(runID string) {
	if i, ok := d.pos[runID]; ok {
		heap.Remove(d, i)
	}
}

func (d *dueIndex) next() durable.Time {
	if len(d.items) == 0 {
		return durable.Time{}
	}
	return d.items[0].Until
}

// listDue returns up to limit due entries in deadline order without
// modifying the heap (entries leave it when their run is committed).
func (d *dueIndex) listDue(now time.Time, limit int) []store.DueRun {
	var out []store.DueRun
	if len(d.items) == 0 || d.items[0].Until.After(now) {
		return out
	}
	// Walk the heap breadth-wise, pruning subtrees that are not due.
	queue := []int{0}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		if i >= len(d.items) || d.items[i].Until.After(now) {
			continue
		}
		out = append(out, d.items[i])
		queue = append(queue, 2*i+1, 2*i+2)
	}
	sortDue(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
