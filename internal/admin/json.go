package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Double is a JSON number written as Jackson writes a Java double: always
// with a fraction or an exponent (0.0, not 0), so that a client that
// decodes ZooKeeper's answers by the literal's form (Python's json module:
// float, not int) sees the same type from Paddock.
type Double float64

// MarshalJSON encodes d as encoding/json does, with ".0" added to an
// integral value.
func (d Double) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(float64(d))
	if err != nil {
		return nil, err
	}
	if !bytes.ContainsAny(b, ".eE") {
		b = append(b, ".0"...)
	}
	return b, nil
}

// Field is one key and value of an Object.
type Field struct {
	Key   string
	Value any
}

// Object is a JSON object whose keys keep their order (ZooKeeper's
// LinkedHashMap), for answers whose keys are data, such as envi's.
type Object []Field

// MarshalJSON encodes o with its keys in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("admin: field %s: %w", f.Key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodeResponse encodes a command's answer: the fields of data (which
// must encode as a JSON object, or be nil), then "command" and "error" (null
// when errMsg is ""), as ZooKeeper's CommandResponse.toMap does. The result
// is indented like ZooKeeper's pretty-printed output and ends in a newline.
func encodeResponse(command string, data any, errMsg string) ([]byte, error) {
	body := []byte("{}")
	if data != nil {
		var err error
		if body, err = json.Marshal(data); err != nil {
			return nil, err
		}
		if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
			return nil, fmt.Errorf("admin: %s: answer is not a JSON object", command)
		}
	}
	var tail Object = Object{{"command", command}, {"error", nil}}
	if errMsg != "" {
		tail[1].Value = errMsg
	}
	t, err := tail.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(body[:len(body)-1])
	if len(body) > 2 {
		b.WriteByte(',')
	}
	b.Write(t[1:])
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
