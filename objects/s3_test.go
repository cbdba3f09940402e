package objects_test

import (
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/objects/objectstest"
)

// A store that went away answers "unavailable" within seconds, and a Put
// that failed leaves no version behind once the store is back.
func TestS3UnreachableIsUnavailable(t *testing.T) {
	t.Parallel()
	for _, versioning := range []bool{true, false} {
		b := objectstest.Fake(t, versioning, "")
		st := b.Open(t)
		mustPut(t, st, "a", "before")
		b.Server.Close()
		start := time.Now()
		_, err := st.Put(ctx, "a", []byte("during"))
		if !errs.Is(err, errs.Unavailable) {
			t.Errorf("versioning=%v: Put to a closed server: %v, want unavailable", versioning, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("versioning=%v: Put took %s to fail", versioning, d)
		}
		if _, _, err := st.Get(ctx, "a", ""); !errs.Is(err, errs.Unavailable) {
			t.Errorf("versioning=%v: Get from a closed server: %v, want unavailable", versioning, err)
		}
		if _, err := st.ListVersions(ctx, "a"); !errs.Is(err, errs.Unavailable) {
			t.Errorf("versioning=%v: ListVersions from a closed server: %v, want unavailable", versioning, err)
		}
	}
}

// Opening a bucket that does not exist is an operator's mistake, reported
// as such rather than as a passing outage.
func TestS3MissingBucketIsNotAnOutage(t *testing.T) {
	t.Parallel()
	b := objectstest.Fake(t, true, "")
	b.Location.Bucket = "no-such-bucket"
	st := b.Open(t)
	_, err := st.Describe(ctx)
	if err == nil || errs.Is(err, errs.Unavailable) {
		t.Errorf("Describe of a missing bucket: %v, want a non-transient error", err)
	}
}
