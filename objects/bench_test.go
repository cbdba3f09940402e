package objects_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"cardhour/objects"
	"cardhour/objects/objectstest"
)

// Speed of the object stores. Against versitygw (started by the test
// environment) these are real S3 round trips on loopback:
//
//	bash scripts/testenv.sh go test -run '^$' -bench . -benchtime 20x -count 5 ./objects/
//
// and the median of the five runs is what the README reports.

type benchBackend struct {
	name string
	open func(b *testing.B) objects.Store
}

func benchBackends() []benchBackend {
	return []benchBackend{
		{"local", func(b *testing.B) objects.Store { return objects.NewLocal(b.TempDir()) }},
		{"gofakes3-versioning-on", func(b *testing.B) objects.Store { return objectstest.Fake(b, true, "").Open(b) }},
		{"versitygw-versioning-on", func(b *testing.B) objects.Store { return objectstest.VersityGW(b, true, "cardhour/").Open(b) }},
		{"versitygw-versioning-off", func(b *testing.B) objects.Store { return objectstest.VersityGW(b, false, "cardhour/").Open(b) }},
	}
}

// BenchmarkPutGet1MiB writes a 1 MiB version and reads it back whole.
func BenchmarkPutGet1MiB(b *testing.B) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 31)
	}
	for _, be := range benchBackends() {
		b.Run(be.name, func(b *testing.B) {
			st := be.open(b)
			ctx := context.Background()
			b.SetBytes(2 << 20)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v, err := st.Put(ctx, "bench/put-get.bin", data)
				if err != nil {
					b.Fatal(err)
				}
				rc, _, err := st.Get(ctx, "bench/put-get.bin", v.VersionID)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, rc)
				_ = rc.Close()
				if err != nil || n != int64(len(data)) {
					b.Fatalf("read %d bytes: %v", n, err)
				}
			}
		})
	}
}

// BenchmarkListVersions1000 lists one key with 1,000 versions.
func BenchmarkListVersions1000(b *testing.B) {
	for _, be := range benchBackends() {
		b.Run(be.name, func(b *testing.B) {
			st := be.open(b)
			ctx := context.Background()
			for i := 0; i < 1000; i++ {
				if _, err := st.Put(ctx, "bench/many.yaml", []byte(fmt.Sprintf("lr: %d\n", i))); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				vs, err := st.ListVersions(ctx, "bench/many.yaml")
				if err != nil || len(vs) != 1000 {
					b.Fatalf("%d versions, %v", len(vs), err)
				}
			}
		})
	}
}
