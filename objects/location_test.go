package objects_test

import (
	"path/filepath"
	"strings"
	"testing"

	"cardhour/objects"
)

func TestParseLocation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want objects.Location
	}{
		{"", objects.Location{Kind: "local", Dir: filepath.Join("/data", "objects")}},
		{"/srv/cardhour/objects", objects.Location{Kind: "local", Dir: "/srv/cardhour/objects"}},
		{"file:///srv/objects/", objects.Location{Kind: "local", Dir: "/srv/objects"}},
		{"s3://cardhour-files", objects.Location{Kind: "s3", Bucket: "cardhour-files", Region: "us-east-1"}},
		{"s3://cardhour-files/prod/files?endpoint=https://oos-cn.ctyunapi.cn&region=cn-east-1",
			objects.Location{Kind: "s3", Bucket: "cardhour-files", Prefix: "prod/files/", Endpoint: "https://oos-cn.ctyunapi.cn", Region: "cn-east-1", PathStyle: true}},
		{"s3://b01/p?endpoint=http://127.0.0.1:7070/&path_style=false",
			objects.Location{Kind: "s3", Bucket: "b01", Prefix: "p/", Endpoint: "http://127.0.0.1:7070", Region: "us-east-1"}},
	} {
		got, err := objects.ParseLocation(c.in, "/data")
		if err != nil {
			t.Errorf("ParseLocation(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseLocation(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseLocationRefusesBadValues(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"s3://":                                  "not a bucket name",
		"s3://Upper_Case":                        "not a bucket name",
		"s3://bucket?endpoint=oos.example":       "absolute http(s) URL",
		"s3://bucket?endpoint=ftp://x":           "absolute http(s) URL",
		"s3://bucket?regoin=cn":                  "unknown parameter \"regoin\"",
		"s3://bucket?path_style=maybe":           "want true or false",
		"s3://bucket/a/../b":                     "bad key prefix",
		"http://oos.example/bucket":              "want a directory",
		"file://":                                "needs a directory",
		"s3://bucket?endpoint=https://x&region=": "region must not be empty",
	} {
		_, err := objects.ParseLocation(in, "/data")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseLocation(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}
