package code

import (
	"testing"
	"time"
)

// Comparing or sorting lists that share long lists ran in one Go call of
// go.starlark.net, out of reach of the step budget, the timeout and run
// cancellation: 3,000 references to each of two equal 1M-item lists take
// ~32 MB and one x == y makes 3e9 item comparisons. The sandbox's
// comparison (pyops.go) checks the watchdog's stop as it goes: the limit
// error comes at the timeout.
func TestCompareSharedListsHonoursTimeout(t *testing.T) {
	src := "def f(_input):\n" +
		"    base = list(range(1000000))\n" +
		"    copy = list(base)\n" +
		"    x = []\n" +
		"    y = []\n" +
		"    for i in range(3000):\n" +
		"        x.append(base)\n" +
		"        y.append(copy)\n" +
		"    return x == y\n"
	wantLimitErrorInChild(t, "CODE_SHARED_EQ_CHILD", 0, src, Limits{Timeout: time.Second}, 15*time.Second, "x == y of lists sharing two equal 1M-item lists")
}

// The same with sorted(): the sort compares the shared lists item by
// item.
func TestSortSharedListsHonoursTimeout(t *testing.T) {
	src := "def f(_input):\n" +
		"    base = list(range(1000000))\n" +
		"    x = []\n" +
		"    for i in range(2000):\n" +
		"        x.append(base)\n" +
		"    return len(sorted(x))\n"
	wantLimitErrorInChild(t, "CODE_SHARED_SORT_CHILD", 0, src, Limits{Timeout: time.Second}, 15*time.Second, "sorted() of lists sharing one 1M-item list")
}

// Hashing a tuple whose items share sub-tuples visits every path: after
// `t = (t, t)` forty times (a few hundred bytes) hashing t makes 2^40
// hash calls in one Go recursion of go.starlark.net. The sandbox walks a
// tuple key with the watchdog before a dict or set hashes it (pyops.go
// hashWalk): the limit error comes at the timeout.
func TestHashOfSharedTuplesHonoursTimeout(t *testing.T) {
	src := "def f(_input):\n" +
		"    t = (1,)\n" +
		"    for i in range(40):\n" +
		"        t = (t, t)\n" +
		"    d = {}\n" +
		"    d[t] = 1\n" +
		"    return len(d)\n"
	wantLimitErrorInChild(t, "CODE_SHARED_HASH_CHILD", 0, src, Limits{Timeout: time.Second}, 15*time.Second, "hash of a tuple sharing its sub-tuples 40 levels deep")
}
