// Package objectstest gives tests real S3 endpoints: an in-process gofakes3
// server, or the versitygw server that scripts/testenv.sh starts (skipped
// with a message when it is not running). Each call makes a bucket of its
// own, with bucket versioning on or off.
package objectstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"cardhour/objects"
)

// Variables scripts/testenv.sh exports for the versitygw server it starts.
const (
	EnvS3Endpoint  = "CARDHOUR_TEST_S3_ENDPOINT"
	EnvS3AccessKey = "CARDHOUR_TEST_S3_ACCESS_KEY"
	EnvS3SecretKey = "CARDHOUR_TEST_S3_SECRET_KEY"
)

// SkipVersityGW is the message versitygw tests skip with when no server is set.
const SkipVersityGW = "versitygw suite skipped: " + EnvS3Endpoint + " is not set (make test starts versitygw and sets it)"

// Bucket is a fresh bucket on a test S3 server.
type Bucket struct {
	Location    objects.Location
	Credentials objects.Credentials
	// Server is the in-process gofakes3 server; nil for versitygw. Closing
	// it takes the store away, for outage tests.
	Server *httptest.Server
}

// Fake starts an in-process gofakes3 server with one bucket.
func Fake(tb testing.TB, versioning bool, prefix string) Bucket {
	tb.Helper()
	backend := s3mem.New()
	faker := gofakes3.New(backend, gofakes3.WithTimeSkewLimit(0))
	ts := httptest.NewServer(faker.Server())
	tb.Cleanup(ts.Close)
	b := Bucket{
		Location:    objects.Location{Kind: "s3", Bucket: "cardhour-test", Prefix: prefix, Endpoint: ts.URL, Region: "us-east-1", PathStyle: true},
		Credentials: objects.Credentials{AccessKey: "fake-access", SecretKey: "fake-secret"},
		Server:      ts,
	}
	mustCreateBucket(tb, b, versioning)
	return b
}

// VersityGW makes a bucket on the versitygw server of the test environment,
// or skips tb when there is none.
func VersityGW(tb testing.TB, versioning bool, prefix string) Bucket {
	tb.Helper()
	endpoint := os.Getenv(EnvS3Endpoint)
	if endpoint == "" {
		tb.Skip(SkipVersityGW)
	}
	r := make([]byte, 6)
	_, _ = rand.Read(r)
	b := Bucket{
		Location: objects.Location{Kind: "s3", Bucket: "ch-test-" + hex.EncodeToString(r), Prefix: prefix,
			Endpoint: endpoint, Region: "us-east-1", PathStyle: true},
		Credentials: objects.Credentials{AccessKey: os.Getenv(EnvS3AccessKey), SecretKey: os.Getenv(EnvS3SecretKey)},
	}
	mustCreateBucket(tb, b, versioning)
	return b
}

// Open opens the bucket as an objects store.
func (b Bucket) Open(tb testing.TB) objects.Store {
	tb.Helper()
	st, err := objects.Open(context.Background(), b.Location, b.Credentials)
	if err != nil {
		tb.Fatalf("objectstest: open %s: %v", b.Location, err)
	}
	return st
}

// Client is a plain SDK client on the bucket's server, for checks the
// objects API does not offer.
func (b Bucket) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:                     b.Location.Region,
		BaseEndpoint:               aws.String(b.Location.Endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(b.Credentials.AccessKey, b.Credentials.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

func mustCreateBucket(tb testing.TB, b Bucket, versioning bool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := b.Client()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b.Location.Bucket)}); err != nil {
		tb.Fatalf("objectstest: create bucket %s at %s: %v", b.Location.Bucket, b.Location.Endpoint, err)
	}
	if !versioning {
		return
	}
	_, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
		Bucket:                  aws.String(b.Location.Bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled},
	})
	if err != nil {
		tb.Fatalf("objectstest: enable versioning on %s: %v", b.Location.Bucket, err)
	}
}
