package servertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// document is the portal's OpenAPI document, read for checking answers.
type document struct {
	ops        []operation
	schemas    map[string]any
	responses  map[string]any
	errorShape map[string]any
}

// operation is one path × method of the document.
type operation struct {
	method    string
	path      string
	segs      []string // template segments; "{…}" is a parameter
	rest      bool     // the last parameter takes the rest of the path
	literals  int
	responses map[string]any
}

var templateParam = regexp.MustCompile(`^\{[^}]+\}$`)

// document reads /api/v1/openapi.json once per portal.
func (e *Env) document() (*document, error) {
	e.schemaOnce.Do(func() { e.schema, e.schemaErr = loadDocument(e.TS.URL + "/api/v1/openapi.json") })
	return e.schema, e.schemaErr
}

func loadDocument(url string) (*document, error) {
	res, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas   map[string]any `json:"schemas"`
			Responses map[string]any `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	d := &document{schemas: raw.Components.Schemas, responses: raw.Components.Responses,
		errorShape: map[string]any{"$ref": "#/components/schemas/Error"}}
	for path, methods := range raw.Paths {
		for method, o := range methods {
			op := operation{method: strings.ToUpper(method), path: path, segs: strings.Split(strings.Trim(path, "/"), "/")}
			op.responses, _ = o["responses"].(map[string]any)
			params, _ := o["parameters"].([]any)
			for _, p := range params {
				pm, _ := p.(map[string]any)
				if pm["in"] == "path" && pm["x-rest-of-path"] == true {
					op.rest = true
				}
			}
			for _, s := range op.segs {
				if !templateParam.MatchString(s) {
					op.literals++
				}
			}
			d.ops = append(d.ops, op)
		}
	}
	// Literal segments win over parameters, as in the router.
	sort.Slice(d.ops, func(i, j int) bool { return d.ops[i].literals > d.ops[j].literals })
	return d, nil
}

// find is the operation a request reaches, nil when none.
func (d *document) find(method, path string) *operation {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i := range d.ops {
		op := &d.ops[i]
		if op.method != method || !op.matches(segs) {
			continue
		}
		return op
	}
	return nil
}

func (op *operation) matches(segs []string) bool {
	n := len(op.segs)
	if len(segs) < n || (len(segs) > n && !op.rest) {
		return false
	}
	for i, s := range op.segs {
		if !templateParam.MatchString(s) && s != segs[i] {
			return false
		}
	}
	return true
}

// checkAnswer lists how an answer of the API departs from the document.
func (e *Env) checkAnswer(req *http.Request, r Response) []string {
	if req.Method == http.MethodHead {
		return nil
	}
	d, err := e.document()
	if err != nil {
		return []string{"reading the document: " + err.Error()}
	}
	op := d.find(req.Method, req.URL.Path)
	if op == nil {
		// No such operation: the router's own 404 or 405, in the API's error body.
		if r.StatusCode < 400 {
			return []string{fmt.Sprintf("status %d from a path and method the document does not describe", r.StatusCode)}
		}
		return d.checkJSON(r.Body, d.errorShape)
	}
	where := op.method + " " + op.path
	status := strconv.Itoa(r.StatusCode)
	resp, ok := op.responses[status].(map[string]any)
	if !ok {
		var listed []string
		for k := range op.responses {
			listed = append(listed, k)
		}
		sort.Strings(listed)
		return []string{fmt.Sprintf("%s answered %d, which it does not list (it lists %s)", where, r.StatusCode, strings.Join(listed, ", "))}
	}
	if ref, ok := resp["$ref"].(string); ok {
		resp, _ = d.responses[strings.TrimPrefix(ref, "#/components/responses/")].(map[string]any)
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(r.Body) > 0 {
			return []string{fmt.Sprintf("%s %d is documented without a body but answered %d bytes", where, r.StatusCode, len(r.Body))}
		}
		return nil
	}
	media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	mt, ok := content[media].(map[string]any)
	if !ok {
		var listed []string
		for k := range content {
			listed = append(listed, k)
		}
		sort.Strings(listed)
		return []string{fmt.Sprintf("%s %d answered Content-Type %q; documented: %s", where, r.StatusCode, media, strings.Join(listed, ", "))}
	}
	if media != "application/json" {
		return nil
	}
	schema, _ := mt["schema"].(map[string]any)
	var out []string
	for _, p := range d.checkJSON(r.Body, schema) {
		out = append(out, fmt.Sprintf("%s %d: %s", where, r.StatusCode, p))
	}
	return out
}

func (d *document) checkJSON(body []byte, schema map[string]any) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []string{"the body is not JSON: " + err.Error()}
	}
	var out []string
	d.validate(v, schema, "$", &out)
	return out
}

// validate checks v against the subset of JSON Schema the portal writes:
// $ref, type, nullable, properties, required, additionalProperties, items,
// enum, oneOf, format date-time.
func (d *document) validate(v any, s map[string]any, at string, out *[]string) {
	if len(*out) > 20 {
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		target, _ := d.schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		if target == nil {
			*out = append(*out, at+": unknown schema "+ref)
			return
		}
		d.validate(v, target, at, out)
		return
	}
	if v == nil {
		if s["nullable"] == true || (s["type"] == nil && s["oneOf"] == nil) {
			return
		}
		*out = append(*out, fmt.Sprintf("%s: null where the document says %v", at, s["type"]))
		return
	}
	if alts, ok := s["oneOf"].([]any); ok {
		for _, a := range alts {
			var sub []string
			am, _ := a.(map[string]any)
			d.validate(v, am, at, &sub)
			if len(sub) == 0 {
				return
			}
		}
		*out = append(*out, fmt.Sprintf("%s: %v matches none of oneOf", at, v))
		return
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "":
		return // any value
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: %T where the document says an object", at, v))
			return
		}
		d.validateObject(m, s, at, out)
	case "array":
		xs, ok := v.([]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: %T where the document says an array", at, v))
			return
		}
		items, _ := s["items"].(map[string]any)
		for i, x := range xs {
			d.validate(x, items, fmt.Sprintf("%s[%d]", at, i), out)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: %T where the document says a string", at, v))
			return
		}
		if s["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				*out = append(*out, fmt.Sprintf("%s: %q is not an RFC 3339 time", at, str))
			}
		}
		if enum, ok := s["enum"].([]any); ok && !inEnum(str, enum) {
			*out = append(*out, fmt.Sprintf("%s: %q is not one of %v", at, str, enum))
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: %T where the document says %s", at, v, typ))
			return
		}
		if _, err := n.Int64(); typ == "integer" && err != nil {
			*out = append(*out, fmt.Sprintf("%s: %s is not an integer", at, n))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			*out = append(*out, fmt.Sprintf("%s: %T where the document says a boolean", at, v))
		}
	default:
		*out = append(*out, fmt.Sprintf("%s: the document has a type %q this check does not know", at, typ))
	}
}

func (d *document) validateObject(m map[string]any, s map[string]any, at string, out *[]string) {
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	for _, r := range req {
		name, _ := r.(string)
		if _, ok := m[name]; !ok {
			*out = append(*out, fmt.Sprintf("%s: the required field %q is missing", at, name))
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ps, ok := props[k].(map[string]any); ok {
			d.validate(m[k], ps, at+"."+k, out)
			continue
		}
		switch extra := s["additionalProperties"].(type) {
		case bool:
			if !extra {
				*out = append(*out, fmt.Sprintf("%s: the field %q is not in the document", at, k))
			}
		case map[string]any:
			d.validate(m[k], extra, at+"."+k, out)
		}
	}
}

func inEnum(s string, enum []any) bool {
	for _, e := range enum {
		if e == s {
			return true
		}
	}
	return false
}
