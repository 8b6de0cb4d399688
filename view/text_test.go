package view

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendLine(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"empty", "", "\n"},
		{"ascii", "hello world", "hello world\n"},
		{"backslash", `a\b`, `a\\b` + "\n"},
		{"newline", "a\nb", `a\nb` + "\n"},
		{"carriage return", "a\r\nb", `a\r\nb` + "\n"},
		{"tab kept", "a\tb", "a\tb\n"},
		{"nul kept", "a\x00b", "a\x00b\n"},
		{"utf8", "Zürich 東京 🌍", "Zürich 東京 🌍\n"},
		{"replacement char is valid", "\uFFFD", "\uFFFD\n"},
		{"invalid byte", "a\xffb", `a\xffb` + "\n"},
		{"truncated sequence", "\xe6\x9d", `\xe6\x9d` + "\n"},
		{"surrogate", "\xed\xa0\x80", `\xed\xa0\x80` + "\n"},
		{"overlong", "\xc0\xaf", `\xc0\xaf` + "\n"},
		{"literal backslash x", `\xff`, `\\xff` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := string(appendLine(nil, []byte(c.in))); got != c.want {
				t.Errorf("appendLine(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// unescapeLine inverts appendLine for one line without its newline.
func unescapeLine(t *testing.T, line string) []byte {
	var out []byte
	for i := 0; i < len(line); i++ {
		if line[i] != '\\' {
			out = append(out, line[i])
			continue
		}
		if i+1 >= len(line) {
			t.Fatalf("dangling backslash in %q", line)
		}
		i++
		switch line[i] {
		case '\\':
			out = append(out, '\\')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 'x':
			b, err := strconv.ParseUint(line[i+1:min(i+3, len(line))], 16, 8)
			if err != nil || i+3 > len(line) || strings.ToLower(line[i+1:i+3]) != line[i+1:i+3] {
				t.Fatalf("bad \\x escape in %q", line)
			}
			out = append(out, byte(b))
			i += 2
		default:
			t.Fatalf("unknown escape \\%c in %q", line[i], line)
		}
	}
	return out
}

// FuzzAppendLine checks that every element becomes exactly one line of
// valid UTF-8 from which the element can be recovered.
func FuzzAppendLine(f *testing.F) {
	for _, s := range []string{"", "plain", "a\\b\nc\rd", "\xff\xfe", "Zürich\x00", "\xed\xa0\x80", `\x41`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, elem []byte) {
		line := appendLine(nil, elem)
		if len(line) == 0 || line[len(line)-1] != '\n' {
			t.Fatalf("%q does not end in a newline", line)
		}
		body := string(line[:len(line)-1])
		if strings.ContainsAny(body, "\n\r") || !utf8.ValidString(body) {
			t.Fatalf("%q is not one line of valid UTF-8", body)
		}
		if got := unescapeLine(t, body); !bytes.Equal(got, elem) {
			t.Fatalf("unescape(appendLine(%q)) = %q", elem, got)
		}
	})
}

// TestObjectLine: an object array's element (its JSON text) shows as a
// string does when it is one, and as its JSON otherwise.
func TestObjectLine(t *testing.T) {
	for elem, want := range map[string]string{
		`"abc"`:             "abc\n",
		`"a\nb\\c\u00e9"`:   "a\\nb\\\\cé\n",
		`1`:                 "1\n",
		`null`:              "null\n",
		`[1,"x\n"]`:         `[1,"x\n"]` + "\n",
		`{"k":"v","n":NaN}`: `{"k":"v","n":NaN}` + "\n",
		`"bad \ud800 half"`: "bad \ufffd half\n",
		`"unterminated`:     `"unterminated` + "\n",
	} {
		if got := string(objectLine(nil, []byte(elem))); got != want {
			t.Errorf("objectLine(%s) = %q, want %q", elem, got, want)
		}
	}
}
