package notify

import (
	"maps"
	"slices"
)

func sortedIDs(m map[int64]string) []int64 { return slices.Sorted(maps.Keys(m)) }
