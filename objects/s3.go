package objects

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"cardhour/errs"
)

// S3 keeps versions in a bucket through the S3 API (SigV4). With bucket
// versioning enabled every Put is a native version; without it, each
// version is written once under its own key (key + "/~" + id) so history
// still works. Which of the two applies is asked of the bucket once and
// then remembered.
type S3 struct {
	client *s3.Client
	loc    Location
	ids    idSource

	mu   sync.Mutex
	mode string // Native or ImmutableKeys once known
	info Info
}

// sha256Meta is the user metadata holding each version's SHA-256, so a
// reader can verify content independently of the store's own checksums.
const sha256Meta = "sha256"

// opTimeout bounds one call including retries, so an unreachable store
// answers "unavailable" in seconds rather than hanging a request.
const opTimeout = 30 * time.Second

// NewS3 builds the client for l. Checksums are calculated and validated only
// when an operation requires them: newer AWS SDKs otherwise add CRC trailers
// that many S3-compatible stores reject.
func NewS3(ctx context.Context, l Location, c Credentials) (*S3, error) {
	httpClient := awshttp.NewBuildableClient().
		WithTimeout(opTimeout).
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = 5 * time.Second })
	cfg := aws.Config{
		Region:     l.Region,
		HTTPClient: httpClient,
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 3
				o.MaxBackoff = 2 * time.Second
				// The client-side retry quota would, after an outage, refuse
				// retries for a while after the store is back.
				o.RateLimiter = ratelimit.None
			})
		},
	}
	if c.AccessKey != "" || c.SecretKey != "" {
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(c.AccessKey, c.SecretKey, c.SessionToken))
	} else {
		def, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(l.Region))
		if err != nil {
			return nil, fmt.Errorf("objects: S3 credentials: %w", err)
		}
		cfg.Credentials = def.Credentials
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if l.Endpoint != "" {
			o.BaseEndpoint = aws.String(l.Endpoint)
		}
		o.UsePathStyle = l.PathStyle
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &S3{client: client, loc: l, ids: idSource{now: time.Now}}, nil
}

// s3Err codes an SDK error: a missing key or version (or a delete marker)
// is NotFound; anything that retrying later may cure (no connection, a
// timeout, a 5xx) is Unavailable; refusals that need the operator (bad
// credentials, no such bucket) are Internal, so they are logged.
func s3Err(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, coded := errs.As(err); coded {
		return err
	}
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return errs.Wrap(errs.NotFound, op, err)
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchKey", "NoSuchVersion", "NotFound", "MethodNotAllowed", "InvalidArgument":
			// GET of a delete marker by version id is 405; an unknown version
			// id is 400 InvalidArgument on several stores.
			return errs.Wrap(errs.NotFound, op, err)
		case "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout":
			return &errs.Error{Code: errs.Unavailable, Op: op, Key: "objects.unavailable", Err: err}
		}
	}
	var ne net.Error
	var send *smithyhttp.RequestSendError
	if errors.As(err, &ne) || errors.As(err, &send) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &errs.Error{Code: errs.Unavailable, Op: op, Key: "objects.unavailable", Err: err}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch status := re.HTTPStatusCode(); {
		case status == 404:
			return errs.Wrap(errs.NotFound, op, err)
		case status >= 500 || status == 429:
			return &errs.Error{Code: errs.Unavailable, Op: op, Key: "objects.unavailable", Err: err}
		}
		return errs.Wrap(errs.Internal, op, err)
	}
	var re2 *retry.MaxAttemptsError
	if errors.As(err, &re2) {
		return &errs.Error{Code: errs.Unavailable, Op: op, Key: "objects.unavailable", Err: err}
	}
	return errs.Wrap(errs.Internal, op, err)
}

func (s *S3) physical(key string) string { return s.loc.Prefix + escapeKey(key) }

func (s *S3) immutable(key, id string, marker bool) string {
	return s.physical(key) + "/" + versionName(id, marker)
}

// Describe asks the bucket whether it versions objects and remembers it.
func (s *S3) Describe(ctx context.Context) (Info, error) {
	const op = "objects.S3.Describe"
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	info := Info{Backend: "s3", Location: s.loc.String()}
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.loc.Bucket)}); err != nil {
		return info, s3Err(op, fmt.Errorf("bucket %s: %w", s.loc.Bucket, err))
	}
	out, err := s.client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(s.loc.Bucket)})
	if err != nil {
		return info, s3Err(op, fmt.Errorf("bucket %s versioning: %w", s.loc.Bucket, err))
	}
	info.Versioning, info.Detail = ImmutableKeys, "bucket versioning off: each version under its own key"
	switch out.Status {
	case types.BucketVersioningStatusEnabled:
		info.Versioning, info.Detail = Native, "bucket versioning enabled"
	case types.BucketVersioningStatusSuspended:
		info.Detail = "bucket versioning suspended: each version under its own key"
	}
	s.mu.Lock()
	s.mode, s.info = info.Versioning, info
	s.mu.Unlock()
	return info, nil
}

// modeOf is the bucket's versioning mode, asked once.
func (s *S3) modeOf(ctx context.Context) (string, error) {
	s.mu.Lock()
	m := s.mode
	s.mu.Unlock()
	if m != "" {
		return m, nil
	}
	info, err := s.Describe(ctx)
	return info.Versioning, err
}

// keyMode checks key and says how the bucket keeps versions.
func (s *S3) keyMode(ctx context.Context, key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return s.modeOf(ctx)
}

// Put writes data as a new version.
func (s *S3) Put(ctx context.Context, key string, data []byte) (Version, error) {
	const op = "objects.S3.Put"
	mode, err := s.keyMode(ctx, key)
	if err != nil {
		return Version{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	sum := sha256.Sum256(data)
	v := Version{Key: key, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), ModTime: time.Now().UTC(), IsLatest: true}
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.loc.Bucket),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String("application/octet-stream"),
		Metadata:      map[string]string{sha256Meta: v.SHA256},
	}
	if mode == Native {
		in.Key = aws.String(s.physical(key))
		out, err := s.client.PutObject(ctx, in)
		if err != nil {
			return Version{}, s3Err(op, err)
		}
		if out.VersionId == nil || *out.VersionId == "" || *out.VersionId == "null" {
			return Version{}, errs.Internalf(op, "bucket %s claims versioning but returned no version id", s.loc.Bucket)
		}
		v.VersionID = *out.VersionId
		return v, nil
	}
	v.VersionID = s.ids.next()
	v.ModTime = idTime(v.VersionID)
	in.Key = aws.String(s.immutable(key, v.VersionID, false))
	if _, err := s.client.PutObject(ctx, in); err != nil {
		return Version{}, s3Err(op, err)
	}
	return v, nil
}

// Get opens a version; "" is the latest.
func (s *S3) Get(ctx context.Context, key, versionID string) (io.ReadCloser, Version, error) {
	const op = "objects.S3.Get"
	mode, err := s.keyMode(ctx, key)
	if err != nil {
		return nil, Version{}, err
	}
	if versionID == "" && mode == ImmutableKeys {
		vs, err := s.ListVersions(ctx, key)
		if err != nil {
			return nil, Version{}, err
		}
		if len(vs) == 0 || vs[0].DeleteMarker {
			return nil, Version{}, notFound(op, key, "")
		}
		versionID = vs[0].VersionID
	}
	in := &s3.GetObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.physical(key))}
	switch {
	case isOwnID(versionID):
		in.Key = aws.String(s.immutable(key, versionID, false))
	case versionID != "":
		in.VersionId = aws.String(versionID)
	}
	// The body outlives this call, so the timeout is left to the HTTP
	// client's own; only the request itself is bounded here.
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		if errs.Is(s3Err(op, err), errs.NotFound) {
			return nil, Version{}, notFound(op, key, versionID)
		}
		return nil, Version{}, s3Err(op, err)
	}
	v := Version{Key: key, VersionID: versionID, Size: aws.ToInt64(out.ContentLength), SHA256: out.Metadata[sha256Meta]}
	if out.VersionId != nil && !isOwnID(versionID) {
		v.VersionID = *out.VersionId
	}
	if out.LastModified != nil {
		v.ModTime = out.LastModified.UTC()
	}
	if isOwnID(v.VersionID) {
		v.ModTime = idTime(v.VersionID)
	}
	return &s3Body{ReadCloser: out.Body, op: op}, v, nil
}

// s3Body codes read errors of a response body the same way as call errors.
type s3Body struct {
	io.ReadCloser
	op string
}

func (b *s3Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = &errs.Error{Code: errs.Unavailable, Op: b.op, Key: "objects.unavailable", Err: err}
	}
	return n, err
}

// ListVersions lists key's versions newest first.
func (s *S3) ListVersions(ctx context.Context, key string) ([]Version, error) {
	const op = "objects.S3.ListVersions"
	mode, err := s.keyMode(ctx, key)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var out []Version
	if mode == Native {
		phys := s.physical(key)
		var markers, immutable []Version
		err = s.listAllVersions(ctx, phys, func(v Version, physKey string) {
			switch {
			case physKey == phys && v.DeleteMarker:
				v.Key = key
				markers = append(markers, v)
			case physKey == phys:
				v.Key = key
				out = append(out, v)
			case strings.HasPrefix(physKey, phys+"/"):
				// Written while the bucket did not version: still history.
				if id, marker, ok := parseVersionName(physKey[len(phys)+1:]); ok && v.IsLatest && !v.DeleteMarker {
					v.Key, v.VersionID, v.DeleteMarker, v.ModTime, v.IsLatest = key, id, marker, idTime(id), false
					immutable = append(immutable, v)
				}
			}
		})
		if err != nil {
			return nil, s3Err(op, err)
		}
		out = mergeNewestFirst(out, markers, immutable)
	} else {
		dir := s.physical(key) + "/"
		err = s.listObjects(ctx, dir, "/", func(physKey string, size int64, mod time.Time) {
			if id, marker, ok := parseVersionName(physKey[len(dir):]); ok {
				out = append(out, Version{Key: key, VersionID: id, Size: size, DeleteMarker: marker, ModTime: idTime(id)})
			}
		})
		if err != nil {
			return nil, s3Err(op, err)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].VersionID > out[j].VersionID })
	}
	for i := range out {
		out[i].IsLatest = i == 0
	}
	return out, nil
}

// listAllVersions pages through ListObjectVersions under prefix.
func (s *S3) listAllVersions(ctx context.Context, prefix string, fn func(v Version, physKey string)) error {
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(s.loc.Bucket), Prefix: aws.String(prefix), MaxKeys: aws.Int32(1000)}
	for {
		out, err := s.client.ListObjectVersions(ctx, in)
		if err != nil {
			return err
		}
		for _, ov := range out.Versions {
			v := Version{VersionID: aws.ToString(ov.VersionId), Size: aws.ToInt64(ov.Size), IsLatest: aws.ToBool(ov.IsLatest)}
			if ov.LastModified != nil {
				v.ModTime = ov.LastModified.UTC()
			}
			fn(v, aws.ToString(ov.Key))
		}
		for _, dm := range out.DeleteMarkers {
			v := Version{VersionID: aws.ToString(dm.VersionId), DeleteMarker: true, IsLatest: aws.ToBool(dm.IsLatest)}
			if dm.LastModified != nil {
				v.ModTime = dm.LastModified.UTC()
			}
			fn(v, aws.ToString(dm.Key))
		}
		if !aws.ToBool(out.IsTruncated) {
			return nil
		}
		if out.NextKeyMarker == nil && out.NextVersionIdMarker == nil {
			return fmt.Errorf("list object versions: truncated without a marker")
		}
		in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
}

// listObjects pages through ListObjectsV2 under prefix.
func (s *S3) listObjects(ctx context.Context, prefix, delimiter string, fn func(physKey string, size int64, mod time.Time)) error {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.loc.Bucket), Prefix: aws.String(prefix)}
	if delimiter != "" {
		in.Delimiter = aws.String(delimiter)
	}
	p := s3.NewListObjectsV2Paginator(s.client, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range out.Contents {
			fn(aws.ToString(o.Key), aws.ToInt64(o.Size), aws.ToTime(o.LastModified))
		}
	}
	return nil
}

// Delete hides key behind a delete marker.
func (s *S3) Delete(ctx context.Context, key string) (Version, error) {
	const op = "objects.S3.Delete"
	mode, err := s.keyMode(ctx, key)
	if err != nil {
		return Version{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if mode == Native {
		out, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.physical(key))})
		if err != nil {
			return Version{}, s3Err(op, err)
		}
		return Version{Key: key, VersionID: aws.ToString(out.VersionId), DeleteMarker: true, IsLatest: true, ModTime: time.Now().UTC()}, nil
	}
	id := s.ids.next()
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.immutable(key, id, true)),
		Body: bytes.NewReader(nil), ContentLength: aws.Int64(0)})
	if err != nil {
		return Version{}, s3Err(op, err)
	}
	return Version{Key: key, VersionID: id, DeleteMarker: true, IsLatest: true, ModTime: idTime(id)}, nil
}

// Copy writes an older version's content as the new latest version.
func (s *S3) Copy(ctx context.Context, key, fromVersionID string) (Version, error) {
	return copyByReading(ctx, s, key, fromVersionID)
}

// RemoveVersion erases one version.
func (s *S3) RemoveVersion(ctx context.Context, key, versionID string) error {
	const op = "objects.S3.RemoveVersion"
	if err := ValidateKey(key); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	in := &s3.DeleteObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.physical(key))}
	if isOwnID(versionID) {
		// Which of the two names it has is unknown here; removing a name that
		// is not there succeeds on S3.
		for _, marker := range []bool{false, true} {
			in.Key = aws.String(s.immutable(key, versionID, marker))
			if _, err := s.client.DeleteObject(ctx, in); err != nil {
				return s3Err(op, err)
			}
		}
		return nil
	}
	in.VersionId = aws.String(versionID)
	if _, err := s.client.DeleteObject(ctx, in); err != nil {
		return s3Err(op, err)
	}
	return nil
}

// Walk visits every version under prefix.
func (s *S3) Walk(ctx context.Context, prefix string, fn func(Version) error) error {
	const op = "objects.S3.Walk"
	mode, err := s.modeOf(ctx)
	if err != nil {
		return err
	}
	physPrefix := s.loc.Prefix
	if prefix = strings.Trim(prefix, "/"); prefix != "" {
		physPrefix = s.physical(prefix) + "/"
	}
	var found []Version
	visit := func(v Version, physKey string) {
		rel := strings.TrimPrefix(physKey, s.loc.Prefix)
		dir, last := "", rel
		if i := strings.LastIndex(rel, "/"); i >= 0 {
			dir, last = rel[:i], rel[i+1:]
		}
		if id, marker, ok := parseVersionName(last); ok {
			if dir == "" || (mode == Native && !v.IsLatest) {
				return // an overwritten copy of an immutable name: not a version of ours
			}
			v.Key, v.VersionID, v.DeleteMarker, v.ModTime = unescapeKey(dir), id, marker, idTime(id)
		} else {
			if mode != Native {
				return // a plain object in an unversioned bucket: not ours to judge
			}
			v.Key = unescapeKey(rel)
		}
		found = append(found, v)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*opTimeout)
	defer cancel()
	if mode == Native {
		err = s.listAllVersions(ctx, physPrefix, visit)
	} else {
		err = s.listObjects(ctx, physPrefix, "", func(physKey string, size int64, mod time.Time) {
			visit(Version{Size: size, ModTime: mod, IsLatest: true}, physKey)
		})
	}
	if err != nil {
		return s3Err(op, err)
	}
	for _, v := range found {
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// mergeNewestFirst orders one key's native versions, delete markers and
// immutable-key versions newest first. S3 lists versions newest first but
// returns delete markers in a list of their own, some stores list versions
// oldest first, and many keep times only to the second: so the versions'
// own order is kept (turned round when the latest comes last), the store's
// latest goes first, and the rest merge by time.
func mergeNewestFirst(versions, markers, immutable []Version) []Version {
	if n := len(versions); n > 1 && versions[n-1].IsLatest && !versions[0].IsLatest {
		for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
			versions[i], versions[j] = versions[j], versions[i]
		}
	}
	out := append(append(versions, markers...), immutable...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].IsLatest != out[j].IsLatest {
			return out[i].IsLatest
		}
		return out[i].ModTime.After(out[j].ModTime)
	})
	return out
}
