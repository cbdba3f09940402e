package notify_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// rawPost sends what the Sender never would, to show a receiver refuses it.
func rawPost(t *testing.T, u, contentType, body string) string {
	t.Helper()
	resp, err := http.Post(u, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status + " " + string(b)
}
