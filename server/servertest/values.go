package servertest

import "net/url"

// CloneValues copies form values, so a test can change one field of a
// valid form.
func CloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
