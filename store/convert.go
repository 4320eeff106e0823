package store

import (
	"encoding/json"
	"strconv"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

func positiveInt(v any) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			// Python's int() of a float (3600.0) truncates.
			f, ferr := strconv.ParseFloat(string(x), 64)
			if ferr != nil || f != f || f >= 1<<63 || f <= -(1<<63) {
				return 0, false
			}
			i = int64(f)
		}
		n = i
	case int:
		n = int64(x)
	case int64:
		n = x
	case float64:
		if x != x || x >= 1<<63 || x <= -(1<<63) {
			return 0, false
		}
		n = int64(x) // truncated, as Python's int()
	case string: // Python's int() reads a decimal string too (86_400, full-width digits)
		i, err := pyval.ToInt(x)
		if err != nil {
			return 0, false
		}
		n = i
	default:
		return 0, false
	}
	return n, n > 0
}
