package notifytest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
)

// The receivers compute each vendor's signature here, written from the
// vendor's documentation and not shared with package notify: a receiver
// that reused the sender's code would agree with any mistake in it.

// dingTalkWant: base64(HMAC-SHA256(key=secret, msg=timestamp+"\n"+secret)).
func dingTalkWant(timestamp, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'\n'})
	mac.Write([]byte(secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// feishuWant: base64(HMAC-SHA256(key=timestamp+"\n"+secret, msg=empty)).
func feishuWant(timestamp, secret string) string {
	mac := hmac.New(sha256.New, []byte(timestamp+"\n"+secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// webhookWant: "sha256=" + hex(HMAC-SHA256(secret, timestamp+"."+body)).
func webhookWant(timestamp int64, secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(append([]byte(strconv.FormatInt(timestamp, 10)+"."), body...))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
