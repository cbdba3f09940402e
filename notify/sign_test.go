package notify_test

import (
	"net/url"
	"testing"

	"cardhour/notify"
)

// A vector from outside this project: the dingding crate's own test
// (docs.rs/crate/dingding, src/signature.rs) signs 1700000000000 with
// "secret" and URL-encodes the result.
func TestDingTalkSignMatchesAPublicSDK(t *testing.T) {
	got := url.QueryEscape(notify.DingTalkSign(1700000000000, "secret"))
	if want := "OuzzJR5%2BxZ4%2FEYwqtNt6sMYZQMTa%2FHEGvc9miJe7XzY%3D"; got != want {
		t.Errorf("sign %s, want %s", got, want)
	}
}
