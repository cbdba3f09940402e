package objects

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Location is a parsed CARDHOUR_OBJECTS value: a local directory or an S3
// bucket with an optional key prefix.
type Location struct {
	Kind      string // "local" or "s3"
	Dir       string // local
	Bucket    string // s3
	Prefix    string // s3: "" or ending in "/"
	Endpoint  string // s3: "" means AWS itself
	Region    string // s3
	PathStyle bool   // s3: bucket in the path instead of the host name
}

// Credentials for the S3 API; empty means the SDK's default chain (shared
// config files, instance roles).
type Credentials struct {
	AccessKey, SecretKey, SessionToken string
}

// String is the location as the start-up log shows it (no secrets in it).
func (l Location) String() string {
	if l.Kind == "local" {
		return l.Dir
	}
	s := "s3://" + l.Bucket + "/" + l.Prefix
	if l.Endpoint != "" {
		s += " at " + l.Endpoint
	}
	return s
}

var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// ParseLocation reads CARDHOUR_OBJECTS. Empty is the directory "objects" in
// the data dir; a path or file:// URL is another directory;
// s3://bucket/prefix?endpoint=…&region=…&path_style=true is a bucket. Path
// style defaults to on when an endpoint is given (S3-compatible stores such
// as Tianyi OOS at *.ctyunapi.cn want it) and off for AWS itself.
func ParseLocation(v, dataDir string) (Location, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return Location{Kind: "local", Dir: filepath.Join(dataDir, "objects")}, nil
	case strings.HasPrefix(v, "file://"):
		p := strings.TrimPrefix(v, "file://")
		if p == "" {
			return Location{}, fmt.Errorf("CARDHOUR_OBJECTS %q: file:// needs a directory", v)
		}
		return Location{Kind: "local", Dir: filepath.Clean(p)}, nil
	case strings.HasPrefix(v, "s3://"):
		return parseS3(v)
	case strings.Contains(v, "://"):
		return Location{}, fmt.Errorf("CARDHOUR_OBJECTS %q: want a directory, file://DIR or s3://bucket/prefix?endpoint=…", v)
	}
	return Location{Kind: "local", Dir: filepath.Clean(v)}, nil
}

func parseS3(v string) (Location, error) {
	u, err := url.Parse(v)
	if err != nil {
		return Location{}, fmt.Errorf("CARDHOUR_OBJECTS: %w", err)
	}
	l := Location{Kind: "s3", Bucket: u.Host, Region: "us-east-1"}
	if !bucketName.MatchString(l.Bucket) {
		return Location{}, fmt.Errorf("CARDHOUR_OBJECTS %q: %q is not a bucket name (3–63 lowercase letters, digits, dots and hyphens)", v, l.Bucket)
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		if err := ValidateKey(p); err != nil {
			return Location{}, fmt.Errorf("CARDHOUR_OBJECTS %q: bad key prefix %q", v, p)
		}
		l.Prefix = p + "/"
	}
	q := u.Query()
	pathStyle := ""
	for k, vals := range q {
		val := vals[0]
		switch k {
		case "endpoint":
			e, err := url.Parse(val)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return Location{}, fmt.Errorf("CARDHOUR_OBJECTS: endpoint %q: want an absolute http(s) URL such as https://oos-cn.ctyunapi.cn", val)
			}
			l.Endpoint = strings.TrimRight(val, "/")
		case "region":
			if val == "" {
				return Location{}, fmt.Errorf("CARDHOUR_OBJECTS: region must not be empty")
			}
			l.Region = val
		case "path_style":
			pathStyle = val
		default:
			return Location{}, fmt.Errorf("CARDHOUR_OBJECTS: unknown parameter %q (want endpoint, region, path_style)", k)
		}
	}
	l.PathStyle = l.Endpoint != ""
	if pathStyle != "" {
		b, err := strconv.ParseBool(pathStyle)
		if err != nil {
			return Location{}, fmt.Errorf("CARDHOUR_OBJECTS: path_style %q: want true or false", pathStyle)
		}
		l.PathStyle = b
	}
	return l, nil
}

// Open returns the store at l. For S3 it builds the client only; the bucket
// is first asked on Describe or the first operation, so a portal can start
// while the store is down.
func Open(ctx context.Context, l Location, c Credentials) (Store, error) {
	switch l.Kind {
	case "local":
		return NewLocal(l.Dir), nil
	case "s3":
		return NewS3(ctx, l, c)
	}
	return nil, fmt.Errorf("objects: unknown location kind %q", l.Kind)
}
