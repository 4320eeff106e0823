package store

import (
	"encoding/json"
	"strconv"
)

func positiveInt(v any) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, false
		}
		n = i
	case int:
		n = int64(x)
	case int64:
		n = x
	case float64:
		if x != float64(int64(x)) {
			return 0, false
		}
		n = int64(x)
	default:
		return 0, false
	}
	return n, n > 0
}
