package telemetry

import "testing"

func TestMaxColumnNameBoundsTheKnownNames(t *testing.T) {
	for _, m := range []map[string]int{gpuColumnNames, appColumnNames} {
		for name := range m {
			if len(name) > maxColumnName {
				t.Errorf("%q is longer than maxColumnName %d", name, maxColumnName)
			}
			if _, ok := lookupColumn(m, name); !ok {
				t.Errorf("%q not found", name)
			}
		}
	}
	if r, ok := lookupColumn(gpuColumnNames, "Memory.Used"); !ok || r != colUsed {
		t.Error("names are looked up in any case")
	}
}
