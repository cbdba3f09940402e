package config_test

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"cardhour/config"
	"cardhour/objects"
)

func TestObjectsDefaultToTheDataDir(t *testing.T) {
	c, err := config.Load("serve", nil, env(map[string]string{"CARDHOUR_DATA": "/srv/ch"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Objects != (objects.Location{Kind: "local", Dir: filepath.Join("/srv/ch", "objects")}) || c.MaxFileBytes != 10<<20 {
		t.Errorf("objects %+v, max %d", c.Objects, c.MaxFileBytes)
	}
}

func TestObjectsS3AndCredentials(t *testing.T) {
	vars := map[string]string{
		"CARDHOUR_OBJECTS":      "s3://cardhour/prod?endpoint=https://oos-cn.ctyunapi.cn&region=cn",
		"AWS_ACCESS_KEY_ID":     "aws-id",
		"AWS_SECRET_ACCESS_KEY": "aws-secret",
		"CARDHOUR_MAX_FILE_MIB": "64",
	}
	c, err := config.Load("serve", nil, env(vars), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := objects.Location{Kind: "s3", Bucket: "cardhour", Prefix: "prod/", Endpoint: "https://oos-cn.ctyunapi.cn", Region: "cn", PathStyle: true}
	if c.Objects != want || c.S3.AccessKey != "aws-id" || c.S3.SecretKey != "aws-secret" || c.MaxFileBytes != 64<<20 {
		t.Errorf("objects %+v creds %+v max %d", c.Objects, c.S3, c.MaxFileBytes)
	}
	// The portal's own variables win over the SDK's.
	vars["CARDHOUR_S3_ACCESS_KEY"], vars["CARDHOUR_S3_SECRET_KEY"] = "ch-id", "ch-secret"
	if c, _ = config.Load("serve", nil, env(vars), io.Discard); c.S3.AccessKey != "ch-id" || c.S3.SecretKey != "ch-secret" {
		t.Errorf("creds %+v, want CARDHOUR_S3_*", c.S3)
	}
}

func TestObjectsBadValuesStopTheStart(t *testing.T) {
	for vars, want := range map[[2]string]string{
		{"CARDHOUR_OBJECTS", "s3://Bad_Bucket"}:     "CARDHOUR_OBJECTS",
		{"CARDHOUR_OBJECTS", "ftp://x/y"}:           "CARDHOUR_OBJECTS",
		{"CARDHOUR_OBJECTS", "s3://b1b?endpoint=x"}: "endpoint",
		{"CARDHOUR_MAX_FILE_MIB", "0"}:              "CARDHOUR_MAX_FILE_MIB",
		{"CARDHOUR_MAX_FILE_MIB", "257"}:            "CARDHOUR_MAX_FILE_MIB",
		{"CARDHOUR_MAX_FILE_MIB", "ten"}:            "CARDHOUR_MAX_FILE_MIB",
		{"CARDHOUR_S3_ACCESS_KEY", "only-the-id"}:   "set both or neither",
	} {
		_, err := config.Load("serve", nil, env(map[string]string{vars[0]: vars[1]}), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: %v, want an error naming %s", vars[0], vars[1], err, want)
		}
	}
}
